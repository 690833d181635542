"""Every file the reward_instruct stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
MODELS = "data/reward_instruct/models"                  # reward.pt, judge.pt, teacher.pt, split.npz
TEACHER_MODEL = "data/reward_instruct/teacher_model"    # MLflow pyfunc folder
SAMPLES = "data/reward_instruct/samples.npz"
GENERATOR_MODEL = "data/reward_instruct/r0_model"       # MLflow pyfunc folder
PREPARE_METRICS = "reports/reward_instruct/prepare.json"
TRAIN_METRICS = "reports/reward_instruct/train.json"
METRICS = "reports/reward_instruct/metrics.json"
PLOT, PLOT_DATA = "reports/reward_instruct/reward_vs_fd.png", "reports/reward_instruct/reward_vs_fd.csv"
GRID = "reports/reward_instruct/samples.png"


def seed_dir(seed: int) -> str:
    """One verdict seed's sub-folder (of MODELS)."""
    return f"seed_{seed}"
