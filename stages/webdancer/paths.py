"""Every file the webdancer stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATA = "data/webdancer/web.npz"                 # sites, questions (sft / rl / test) and the SFT trajectories
MODELS = "data/webdancer/models"                # one MLflow pyfunc model per trained agent (pyfunc.py)
PREPARE_METRICS = "reports/webdancer/prepare.json"
TRAIN_METRICS = "reports/webdancer/train.json"
METRICS = "reports/webdancer/metrics.json"
RESULTS = "reports/webdancer/results.csv"       # Pass@1 and steps per agent and depth
PLOT, PLOT_DATA = "reports/webdancer/pass_by_depth.png", "reports/webdancer/pass_by_depth.csv"
EPISODE_PNG = "reports/webdancer/episode.png"   # one held-out episode of SFT+RL, rendered
