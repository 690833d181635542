"""Every file the coral_diffusion stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
DATA = "data/coral_diffusion/digits.npz"              # per verdict seed (keys seed|name): test, pool, long-tailed (lt), balanced control (bal)
CLASSIFIER = "data/coral_diffusion/classifier.npz"    # per verdict seed: the real-data MLP classifier's weights
MODEL_DDPM = "data/coral_diffusion/model_ddpm"        # the first verdict seed's long-tailed DDPM without CORAL (MLflow pyfunc, pyfunc.py)
MODEL_CORAL = "data/coral_diffusion/model_coral"      # the same with CORAL
MODELS = "data/coral_diffusion/models.pt"             # every model of every verdict seed: the stack (ddpm.stack_states) and its jobs
PREPARE_METRICS = "reports/coral_diffusion/prepare.json"
TRAIN_METRICS = "reports/coral_diffusion/train.json"
METRICS = "reports/coral_diffusion/metrics.json"
RESULTS = "reports/coral_diffusion/per_class.csv"     # one row per seed, data set, model and class
PLOT, PLOT_DATA = "reports/coral_diffusion/tail_vs_coral.png", "reports/coral_diffusion/tail_vs_coral.csv"
GRID = "reports/coral_diffusion/samples.png"          # generated samples, a row per class, a panel per model
