"""Every file the jsp_multipolicy stages read or write, in one place."""
TEST_SET = "data/jsp_multipolicy/test.npz"
MODELS = "data/jsp_multipolicy/models.pt"
MLFLOW_MODELS = "data/jsp_multipolicy/mlflow"   # one MLflow pyfunc folder per network (pyfunc.py)
PREPARE_METRICS = "reports/jsp_multipolicy/prepare.json"
TRAIN_METRICS = "reports/jsp_multipolicy/train.json"
METRICS = "reports/jsp_multipolicy/metrics.json"
PLOT, PLOT_DATA = "reports/jsp_multipolicy/gaps.png", "reports/jsp_multipolicy/gaps.csv"
SETS = ("g10", "g15", "flow")          # test sets: 10x10 JSSP, 15x15 JSSP, 10x10 flow shop
