"""rppg_cogload prepare: for every verdict seed, simulate the participants and their sensors
(neurokit2), and measure every recording's vital signs and load features (scipy.signal, heartpy) in
the main setting and its control (noise shared by both cameras).

The seeds run one after another in this process (stages.common.seeds.run_seeds): each seed's
physiology and sensors come from its own generators (``rng(seed, 0)``; ``rng(seed, 1, k)`` for
setting k), so a seed's figures do not depend on which other seeds ran.

Outputs: data/rppg_cogload/measures.npz (``s<seed>/<key>`` per recording: participant, task, load,
TLX, label, and ``<setting>/<column>`` for every estimate and feature of measure.py),
data/rppg_cogload/example.npz (one recording of the first seed, for the plot) and
reports/rppg_cogload/prepare.json (sizes and label balance per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import EXAMPLE, MEASURES, PREPARE_METRICS

SETTINGS = ("main", "shared_noise")


def seed_measures(p, seed: int, example: int | None = None, progress: bool = False):
    """One seed's measures (``{key: array}``: labels and ``<setting>/<column>``) and, if ``example``
    is a recording index, that recording's signals in the main setting (else ``{}``)."""
    import numpy as np
    from tqdm import tqdm

    from stages.common.seeds import rng

    from .measure import contact_columns, remote_columns
    from .sim import physiology, sensors

    pp = p.prepare
    n_rec = 6 * pp.participants
    with tqdm(total=n_rec, desc=f"seed {seed} simulate", mininterval=2, leave=False, disable=not progress) as bar:
        ph = physiology(pp.participants, pp.duration_s, pp.fs, pp.effects.model_dump(), rng(seed, 0), bar)
    out = {"participant": ph.participant, "task": ph.task, "load": ph.load, "tlx": ph.tlx, "label": ph.label,
           "hr_set": ph.hr_set, "rr_set": ph.rr_set, "blink_set": ph.blink_set}
    with tqdm(total=n_rec, desc=f"seed {seed} contact", mininterval=2, leave=False, disable=not progress) as bar:
        out.update({f"main/{c}": v for c, v in contact_columns(ph, bar).items()})
    ex = {}
    for k, name in enumerate(SETTINGS):
        se = sensors(ph, getattr(pp, name).model_dump(), rng(seed, 1, k))
        with tqdm(total=n_rec, desc=f"seed {seed} {name}", mininterval=2, leave=False, disable=not progress) as bar:
            out.update({f"{name}/{c}": v for c, v in remote_columns(ph, se, bar).items()})
        if name == "main" and example is not None:
            i = example
            ex = {"fs": np.array(float(pp.fs)), "ppg": ph.ppg[i], "rgb": se.rgb[i], "nir": se.nir[i],
                  "rsp": ph.rsp[i], "thermal": se.thermal[i], "radar": se.radar[i], "eye": se.eye[i]}
    return out, ex


def main() -> None:
    with stage("rppg_cogload", "prepare", PARAMS) as ctx:
        from stages.common.device import limit_threads

        limit_threads()            # one BLAS thread: small problems, shared cores
        import numpy as np

        from stages.common.io import write_json, write_npz
        from stages.common.seeds import run_seeds

        p = ctx.params.prepare
        first = ctx.seeds[0]
        res = run_seeds(ctx.seeds, lambda s: seed_measures(ctx.params, s, ctx.params.evaluate.example if s == first
                                                           else None, progress=True), what="prepare seed")
        write_npz(ctx.path(MEASURES), {f"s{s}/{k}": v for s, (m, _) in res.items() for k, v in m.items()})
        write_npz(ctx.path(EXAMPLE), {k: np.asarray(v, dtype=np.float32) for k, v in res[first][1].items()})
        write_json(ctx.path(PREPARE_METRICS), {
            "participants": p.participants, "recordings_per_seed": 6 * p.participants, "duration_s": p.duration_s,
            "fs": p.fs, "seeds": list(ctx.seeds), "example_seed": first,
            "per_seed": {str(s): {"share_high_load": float(m["label"].mean()),
                                  "heartpy_failures_remote": int(np.isnan(m["main/remote_rmssd"]).sum()),
                                  "heartpy_failures_contact": int(np.isnan(m["main/contact_rmssd"]).sum())}
                         for s, (m, _) in res.items()}})
        print(f"  {6 * p.participants} recordings of {p.duration_s} s per seed, seeds {list(ctx.seeds)}; high load "
              + ", ".join(f"{m['label'].mean():.2f}" for m, _ in res.values()), flush=True)


if __name__ == "__main__":
    main()
