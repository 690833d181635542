"""Every file the w2v_quartic stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
RUNS = "data/w2v_quartic/runs"                        # seed_<s>/<role>.npz per verdict seed and corpus (train.run_corpus)
TRAIN_METRICS = "reports/w2v_quartic/train.json"
METRICS = "reports/w2v_quartic/metrics.json"
PLOT_DYNAMICS = "reports/w2v_quartic/dynamics.png"
PLOT_TIMES = "reports/w2v_quartic/step_times.png"
PLOT_OVERLAP = "reports/w2v_quartic/overlap.png"
PLOT_SCORES = "reports/w2v_quartic/downstream.png"
CSV_RANK = "reports/w2v_quartic/rank_curve.csv"
CSV_TIMES = "reports/w2v_quartic/step_times.csv"
CSV_SCORES = "reports/w2v_quartic/scores.csv"


def corpus_dir(rp) -> str:
    from stages.common.corpora import corpus_path

    return corpus_path("realtext") if rp.source == "realtext" else corpus_path("topics", rp.corpus)


def seed_dir(seed: int) -> str:
    """A verdict seed's folder under RUNS."""
    return f"seed_{seed}"
