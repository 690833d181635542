"""Every file the nac_b stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
MDPS = "data/nac_b/mdps.json"                   # the MDPs and their exact references (prepare)
RESULTS = "data/nac_b/results.json"             # per-run regrets (train; evaluate reads it)
PREPARE_METRICS = "reports/nac_b/prepare.json"
TRAIN_METRICS = "reports/nac_b/train.json"
METRICS = "reports/nac_b/metrics.json"
PLOT_REGRET = "reports/nac_b/regret_vs_T.png"
PLOT_BATCHING = "reports/nac_b/batching.png"
CSV_REGRET = "reports/nac_b/regret_loglog.csv"
CSV_BATCHING = "reports/nac_b/batching.csv"
