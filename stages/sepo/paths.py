"""Every file the sepo stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATA = "data/sepo/sequences.npz"
PRETRAINED = "data/sepo/pretrained"          # MLflow pyfunc model folder
FINETUNED = "data/sepo/sepo_model"           # MLflow pyfunc model folder (released SEPO)
CURVES = "data/sepo/curves.json"
PRETRAINED_DIST = "data/sepo/pretrained_dist.npz"   # every seed's exact pre-trained distribution
PREPARE_METRICS = "reports/sepo/prepare.json"
TRAIN_METRICS = "reports/sepo/train.json"
METRICS = "reports/sepo/metrics.json"
PLOT, PLOT_DATA = "reports/sepo/reward_vs_kl.png", "reports/sepo/reward_vs_kl.csv"
MATCHED = "reports/sepo/matched_kl.csv"
