"""Every file the cdc_gs stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
IMAGES = "data/cdc_gs/images.npz"               # the target images and their wavelet complexity maps
FITS = "data/cdc_gs/fits.npz"                   # every fit's primitives and render
MODEL = "data/cdc_gs/model"                     # the splats at the main count as an MLflow pyfunc (pyfunc.py)
PREPARE_METRICS = "reports/cdc_gs/prepare.json"
TRAIN_METRICS = "reports/cdc_gs/train.json"
METRICS = "reports/cdc_gs/metrics.json"
RESULTS = "reports/cdc_gs/results.csv"          # one row per image, method and count
PLOT, PLOT_DATA = "reports/cdc_gs/psnr_vs_count.png", "reports/cdc_gs/psnr_vs_count.csv"
GRID = "reports/cdc_gs/grid.png"                # target, ADC render, CDC render per image
