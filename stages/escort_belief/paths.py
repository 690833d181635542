"""Every file the escort_belief stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
PROBLEMS = "data/escort_belief/problems.npz"          # arrays keyed ``s<seed>/d<d>/<name>`` (keys.key)
PREPARE_METRICS = "reports/escort_belief/prepare.json"
TRAIN_DIR = "data/escort_belief/train"        # shard-<i>/ of every shard of the matrix stage
PARTICLES = "particles.npz"                   # in a shard's folder
LIGHTDARK = "lightdark.json"


def shard_dir(index: int) -> str:
    return f"{TRAIN_DIR}/shard-{index}"


def metrics_file(index: int) -> str:
    return f"reports/escort_belief/train-{index}.json"


METRICS = "reports/escort_belief/metrics.json"
PLOT_DIM = "reports/escort_belief/accuracy_vs_dim.png"
PLOT_2D = "reports/escort_belief/particles_2d.png"
PLOT_LD = "reports/escort_belief/lightdark_returns.png"
PLOT_RATIO = "reports/escort_belief/ratio_reps_dmax.png"
CSV_DIM = "reports/escort_belief/accuracy_vs_dim.csv"
