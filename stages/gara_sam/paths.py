"""Every file the gara_sam stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
SCENES = "data/gara_sam/scenes.npz"          # pre-training, adaptation and test images (uint8) and masks
WEIGHTS = "data/gara_sam/weights.npz"        # every arm's state dict (float32 arrays, keys "<arm>/<name>")
MODEL = "data/gara_sam/model"                # the GaRA-adapted segmenter as an MLflow pyfunc model (pyfunc.py)
PREPARE_METRICS = "reports/gara_sam/prepare.json"
TRAIN_METRICS = "reports/gara_sam/train.json"
METRICS = "reports/gara_sam/metrics.json"
RESULTS = "reports/gara_sam/iou_by_condition.csv"     # one row per arm and test condition
PLOT, PLOT_DATA = "reports/gara_sam/iou_by_group.png", "reports/gara_sam/iou_by_group.csv"
RANK_PLOT = "reports/gara_sam/gate_rank.png"
