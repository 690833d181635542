"""Every file the nav_knowledge stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
WORLDS = "data/nav_knowledge/worlds.json"            # worlds, knowledge sets and trajectories (prepare)
POSTERIOR = "data/nav_knowledge/posterior.npz"       # per-wall posteriors and per-walk NLLs (train)
PREPARE_METRICS = "reports/nav_knowledge/prepare.json"
TRAIN_METRICS = "reports/nav_knowledge/train.json"
REPLAN_METRICS = "reports/nav_knowledge/replan.json"  # replanning timings (they vary run to run)
REPLAN_CSV = "reports/nav_knowledge/replan.csv"
METRICS = "reports/nav_knowledge/metrics.json"
PLOT_GRID = "reports/nav_knowledge/posterior_grid.png"
PLOT_AUROC = "reports/nav_knowledge/auroc_ess.png"
PLOT_REPLAN = "reports/nav_knowledge/replan_time.png"
