"""Every file the bitmark stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DIGITS = "data/bitmark/digits.npz"
MODEL_CLEAN = "data/bitmark/model_clean"
MODEL_RADIO = "data/bitmark/model_radioactive"
MODEL_CONTROL = "data/bitmark/model_control"
WEIGHTS = "data/bitmark/weights"            # <seed>/<arm>.pt: every verdict seed's models
PREPARE_METRICS = "reports/bitmark/prepare.json"
TRAIN_METRICS = "reports/bitmark/train.json"
METRICS = "reports/bitmark/metrics.json"
ROBUST_PLOT, ROBUST_DATA = "reports/bitmark/robustness.png", "reports/bitmark/robustness.csv"
SWEEP_PLOT, SWEEP_DATA = "reports/bitmark/delta_sweep.png", "reports/bitmark/delta_sweep.csv"
SAMPLES_PLOT = "reports/bitmark/samples.png"
