"""Every file the attr_analogy stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
RESULTS = "data/attr_analogy/results.json"      # every curve the train step computes
TRAIN_METRICS = "reports/attr_analogy/train.json"
METRICS = "reports/attr_analogy/metrics.json"
PLOT_K = "reports/attr_analogy/accuracy_vs_k.png"
PLOT_REMOVAL = "reports/attr_analogy/removal.png"
PLOT_NOISE = "reports/attr_analogy/noise.png"
PLOT_REALTEXT = "reports/attr_analogy/realtext.png"
PLOT_CONTROL = "reports/attr_analogy/control.png"
CSV_K = "reports/attr_analogy/accuracy_vs_k.csv"
CSV_REMOVAL = "reports/attr_analogy/removal.csv"
CSV_REMOVAL_EXACT = "reports/attr_analogy/removal_exact.csv"
CSV_NOISE = {kind: f"reports/attr_analogy/noise_{kind}.csv" for kind in ("sigma", "keep", "pairs")}
CSV_REALTEXT = "reports/attr_analogy/realtext.csv"
CSV_CONTROL = "reports/attr_analogy/control.csv"
