"""Every file the mnl_assortment stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
ENV = "data/mnl_assortment/env.npz"                      # the online and offline problems, with their optima
PREPARE_METRICS = "reports/mnl_assortment/prepare.json"
RESULTS = "data/mnl_assortment/results.npz"              # online regret curves and the offline sweep
TRAIN_METRICS = "reports/mnl_assortment/train.json"
METRICS = "reports/mnl_assortment/metrics.json"
PLOT_REGRET = "reports/mnl_assortment/regret_vs_t.png"
PLOT_OFFLINE = "reports/mnl_assortment/offline_vs_n.png"
CSV_REGRET = "reports/mnl_assortment/regret_loglog.csv"
CSV_OFFLINE = "reports/mnl_assortment/offline.csv"
