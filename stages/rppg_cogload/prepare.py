"""rppg_cogload prepare: simulate the participants and their sensors (neurokit2), and measure every
recording's vital signs and load features (scipy.signal, heartpy) in the main setting and its two
controls (noise shared by both cameras; strong head motion).

Outputs: data/rppg_cogload/measures.npz (per recording: participant, task, load, TLX, label, and
``<setting>/<column>`` for every estimate and feature of measure.measure), data/rppg_cogload/example.npz
(one recording's signals, for the plot) and reports/rppg_cogload/prepare.json (sizes, label balance).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import EXAMPLE, MEASURES, PREPARE_METRICS

SETTINGS = ("main", "shared_noise", "high_motion")


def main() -> None:
    with stage("rppg_cogload", "prepare", PARAMS) as ctx:
        from stages.common.device import limit_threads

        limit_threads()            # one BLAS thread: small problems, shared cores
        import numpy as np
        from tqdm import tqdm

        from stages.common.io import write_json, write_npz

        from .measure import measure
        from .sim import physiology, sensors

        p = ctx.params.prepare
        n_rec = 6 * p.participants
        with tqdm(total=n_rec, desc="simulate", mininterval=2, leave=False) as bar:
            ph = physiology(p.participants, p.duration_s, p.fs, p.effects.model_dump(), np.random.default_rng([ctx.seed, 0]),
                            bar)
        out = {"participant": ph.participant, "task": ph.task, "load": ph.load, "tlx": ph.tlx, "label": ph.label,
               "hr_set": ph.hr_set, "rr_set": ph.rr_set, "blink_set": ph.blink_set}
        example = {}
        for k, name in enumerate(SETTINGS):
            se = sensors(ph, getattr(p, name).model_dump(), np.random.default_rng([ctx.seed, 1, k]))
            with tqdm(total=n_rec, desc=f"measure {name}", mininterval=2, leave=False) as bar:
                cols = measure(ph, se, contact=(name == "main"), progress=bar)
            out.update({f"{name}/{c}": v for c, v in cols.items()})
            if name == "main":
                i = ctx.params.evaluate.example
                example = {"fs": np.array(float(p.fs)), "ppg": ph.ppg[i], "rgb": se.rgb[i], "nir": se.nir[i],
                           "rsp": ph.rsp[i], "thermal": se.thermal[i], "radar": se.radar[i], "eye": se.eye[i]}
        write_npz(ctx.path(MEASURES), out)
        write_npz(ctx.path(EXAMPLE), {k: np.asarray(v, dtype=np.float32) for k, v in example.items()})
        write_json(ctx.path(PREPARE_METRICS), {
            "participants": p.participants, "recordings": n_rec, "duration_s": p.duration_s, "fs": p.fs,
            "share_high_load": float(ph.label.mean()),
            "heartpy_failures_remote": int(np.isnan(out["main/remote_rmssd"]).sum()),
            "heartpy_failures_contact": int(np.isnan(out["main/contact_rmssd"]).sum())})
        print(f"  {n_rec} recordings of {p.duration_s} s; {ph.label.mean():.2f} high load", flush=True)


if __name__ == "__main__":
    main()
