"""Every file the rl_vla stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DEMOS = "data/rl_vla/demos.npz"                 # the scripted expert's steps (SFT data)
EPISODES = "data/rl_vla/episodes.json"          # evaluation reset seeds per split, and their specs
MODELS = "data/rl_vla/models"                   # one MLflow pyfunc model per method (pyfunc.py)
PREPARE_METRICS = "reports/rl_vla/prepare.json"
TRAIN_METRICS = "reports/rl_vla/train.json"
METRICS = "reports/rl_vla/metrics.json"
RESULTS = "reports/rl_vla/results.csv"          # success per method and split, with intervals
PLOT, PLOT_DATA = "reports/rl_vla/success_by_shift.png", "reports/rl_vla/success_by_shift.csv"
CURVES = "reports/rl_vla/training_curves.png"
ROLLOUT_GIF, ROLLOUT_PNG = "reports/rl_vla/rollout.gif", "reports/rl_vla/rollout.png"
