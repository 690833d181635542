"""Every file the llm_co_foarl stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATASET = "data/llm_co_foarl/dataset.json"          # solved instances: {problem: {train, test}}
MODELS = "data/llm_co_foarl/models"                  # seed_<s>/{sft,foarl,sft_more}.pt, config.json
MLFLOW_MODEL = "data/llm_co_foarl/mlflow_model"      # the first verdict seed's FOARL model as an MLflow pyfunc model
PREPARE_METRICS = "reports/llm_co_foarl/prepare.json"
TRAIN_METRICS = "reports/llm_co_foarl/train.json"
METRICS = "reports/llm_co_foarl/metrics.json"
PLOT, PLOT_DATA = "reports/llm_co_foarl/feasible_gap.png", "reports/llm_co_foarl/feasible_gap.csv"
CURVE_PLOT, CURVE_DATA = "reports/llm_co_foarl/foarl_curve.png", "reports/llm_co_foarl/foarl_curve.csv"
SFT_CURVE_PLOT, SFT_CURVE_DATA = "reports/llm_co_foarl/sft_curve.png", "reports/llm_co_foarl/sft_curve.csv"


def seed_dir(models: str, seed: int) -> str:
    """A verdict seed's model folder under ``models``."""
    return f"{models}/seed_{seed}"
