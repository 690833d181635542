"""Every file the rppg_cogload stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
MEASURES = "data/rppg_cogload/measures.npz"
EXAMPLE = "data/rppg_cogload/example.npz"
MODEL = "data/rppg_cogload/model"
PREPARE_METRICS = "reports/rppg_cogload/prepare.json"
TRAIN_METRICS = "reports/rppg_cogload/train.json"
METRICS = "reports/rppg_cogload/metrics.json"
HR_PLOT, HR_TABLE = "reports/rppg_cogload/hr_mae.png", "reports/rppg_cogload/hr_mae.csv"
ACC_PLOT, ACC_TABLE = "reports/rppg_cogload/load_accuracy.png", "reports/rppg_cogload/load_accuracy.csv"
SIGNAL_PLOT = "reports/rppg_cogload/signals.png"


def seed_slice(m: dict, seed: int) -> dict:
    """One seed's arrays of measures.npz, without the ``s<seed>/`` prefix."""
    pre = f"s{seed}/"
    out = {k[len(pre):]: v for k, v in m.items() if k.startswith(pre)}
    if not out:
        raise KeyError(f"seed {seed} is not in {MEASURES} (seeds there: "
                       f"{sorted({k.split('/')[0] for k in m})}); run `dvc repro` for rppg_cogload-prepare")
    return out
