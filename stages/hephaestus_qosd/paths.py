"""Every file the hephaestus_qosd stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
INSTANCES = "data/hephaestus_qosd/instances.json"      # ``seeds``: seed -> train and test graphs
MODELS = "data/hephaestus_qosd/models"               # seed_<s>/: each verdict seed's mixture CVAE, an MLflow pyfunc model (pyfunc.py)
PREPARE_METRICS = "reports/hephaestus_qosd/prepare.json"
TRAIN_METRICS = "reports/hephaestus_qosd/train.json"
METRICS = "reports/hephaestus_qosd/metrics.json"
RESULTS = "reports/hephaestus_qosd/results.csv"               # one row per seed, test instance and method
PLOT, PLOT_DATA = "reports/hephaestus_qosd/cost_vs_optimum.png", "reports/hephaestus_qosd/cost_vs_optimum.csv"


def model_dir(seed: int) -> str:
    """The MLflow model folder of one verdict seed's Morph, under :data:`MODELS`."""
    return f"{MODELS}/seed_{seed}"
