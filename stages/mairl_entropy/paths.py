"""Every file the mairl_entropy stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
GAMES, CARD = "data/mairl_entropy/games.npz", "data/mairl_entropy/card.json"   # the games; how they were made
RESULTS, SWEEP = "data/mairl_entropy/results.json", "data/mairl_entropy/sweep.npz"  # train's figures; recovery errors
PREPARE_METRICS = "reports/mairl_entropy/prepare.json"
TRAIN_METRICS = "reports/mairl_entropy/train.json"
METRICS = "reports/mairl_entropy/metrics.json"
PLOT_RECOVERY, CSV_RECOVERY = "reports/mairl_entropy/recovery.png", "reports/mairl_entropy/recovery.csv"
PLOT_AMBIGUITY, CSV_AMBIGUITY = "reports/mairl_entropy/ambiguity.png", "reports/mairl_entropy/ambiguity.csv"
PLOT_TRANSFER, CSV_TRANSFER = "reports/mairl_entropy/transfer.png", "reports/mairl_entropy/transfer.csv"
