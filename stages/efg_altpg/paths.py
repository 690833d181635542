"""Every file the efg_altpg stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
GAMES = "data/efg_altpg/games"                      # <game>.npz (sequence form) per game, + .efg for random ones
PREPARE_REPORT = "reports/efg_altpg/prepare.json"   # sizes and the OpenSpiel agreement checks
RUNS = "data/efg_altpg/runs.json"                   # every run train keeps (evaluate reads it)
TRAIN_REPORT = "reports/efg_altpg/train.json"
METRICS = "reports/efg_altpg/metrics.json"
PLOT_CURVES = "reports/efg_altpg/curves.png"
PLOT_RATE = "reports/efg_altpg/rate.png"
CSV_KUHN = "reports/efg_altpg/curves_kuhn.csv"
CSV_LEDUC = "reports/efg_altpg/curves_leduc.csv"
CSV_RATE = "reports/efg_altpg/rate.csv"
