"""Every file the zipf_bigram stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
STATS, PAIRS, REALTEXT = "data/zipf_bigram/stats", "data/zipf_bigram/pairs", "data/zipf_bigram/realtext"
PREPARE_METRICS = "reports/zipf_bigram/prepare.json"
RESULTS = "data/zipf_bigram/results.json"               # everything train computes, with curves
TRAIN_METRICS = "reports/zipf_bigram/train.json"
METRICS = "reports/zipf_bigram/metrics.json"
PLOT_SCALING = "reports/zipf_bigram/iterations_vs_d.png"
PLOT_CURVES = "reports/zipf_bigram/loss_curves.png"
CSV_SCALING = "reports/zipf_bigram/iterations_loglog.csv"
CSV_REALTEXT = "reports/zipf_bigram/realtext_curves.csv"
