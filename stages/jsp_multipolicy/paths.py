"""Every file the jsp_multipolicy stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATASET = "data/jsp_multipolicy/dataset"
FITS = "data/jsp_multipolicy/fits.npz"
PREPARE_METRICS = "reports/jsp_multipolicy/prepare.json"
TRAIN_METRICS = "reports/jsp_multipolicy/train.json"
METRICS = "reports/jsp_multipolicy/metrics.json"
PLOT, PLOT_DATA = "reports/jsp_multipolicy/test_mse.png", "reports/jsp_multipolicy/test_mse.csv"
