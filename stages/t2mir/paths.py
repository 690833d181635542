"""Every file the t2mir stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATASET = "data/t2mir/dataset"
FITS = "data/t2mir/fits.npz"
PREPARE_METRICS = "reports/t2mir/prepare.json"
TRAIN_METRICS = "reports/t2mir/train.json"
METRICS = "reports/t2mir/metrics.json"
PLOT, PLOT_DATA = "reports/t2mir/test_mse.png", "reports/t2mir/test_mse.csv"
