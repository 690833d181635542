"""Every file the noisy_grpo stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATASET = "data/noisy_grpo/dataset.npz"
POLICIES = "data/noisy_grpo/policies.pt"
MODEL = "data/noisy_grpo/model"
PREPARE_METRICS = "reports/noisy_grpo/prepare.json"
TRAIN_METRICS = "reports/noisy_grpo/train.json"
METRICS = "reports/noisy_grpo/metrics.json"
PLOT, PLOT_DATA = "reports/noisy_grpo/accuracy.png", "reports/noisy_grpo/accuracy.csv"
