"""Every file the mtl_kd stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
TESTSETS = "data/mtl_kd/testsets"            # one npz per (variant, size): instances + PyVRP routes' costs
MODELS = "data/mtl_kd/models"                # teachers' and student's weights (torch state dicts)
STUDENT_MODEL = "data/mtl_kd/student_model"  # the student as an MLflow pyfunc model
PREPARE_METRICS = "reports/mtl_kd/prepare.json"
TRAIN_METRICS = "reports/mtl_kd/train.json"
METRICS = "reports/mtl_kd/metrics.json"
PLOT, PLOT_DATA = "reports/mtl_kd/gaps.png", "reports/mtl_kd/gaps.csv"
