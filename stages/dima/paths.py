"""Every file the dima stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATA = "data/dima/transitions.npz"
WEIGHTS = "data/dima/weights.pt"
CONFIG = "data/dima/config.json"
MODEL = "data/dima/model"
PREPARE_METRICS = "reports/dima/prepare.json"
TRAIN_METRICS = "reports/dima/train.json"
PPO_MODEL = "data/dima/ppo.zip"
BASELINE_METRICS = "reports/dima/baseline.json"
METRICS = "reports/dima/metrics.json"
PLOT, PLOT_DATA = "reports/dima/rollout_mse.png", "reports/dima/rollout_mse.csv"
RETURN_PLOT, RETURN_DATA = "reports/dima/returns.png", "reports/dima/returns.csv"
RENDER_GIF, RENDER_PNG = "reports/dima/episode.gif", "reports/dima/episode.png"


def seed_key(seed: int, name: str) -> str:
    """The key of one verdict seed's array in transitions.npz (it holds every seed's)."""
    return f"s{seed}_{name}"
