"""Every file the auto_refine stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
KB = "data/auto_refine/kb.json"                # per verdict seed: documents and questions
POLICIES = "data/auto_refine/policies.pt"      # per verdict seed: every arm's scorer
CURVES = "data/auto_refine/curves.json"        # per verdict seed and arm: training reward, held-out curve
MODEL = "data/auto_refine/model"              # the first seed's AutoRefine scorer as an MLflow pyfunc model (pyfunc.py)
PREPARE_METRICS = "reports/auto_refine/prepare.json"
TRAIN_METRICS = "reports/auto_refine/train.json"
METRICS = "reports/auto_refine/metrics.json"
PLOT, PLOT_DATA = "reports/auto_refine/em.png", "reports/auto_refine/em.csv"
