"""gara_sam seeds as an axis: the train stage's way (one process; the frozen segmenter pre-trained
once from the fixed base seed; each seed's three adapters one after another) against the one-seed
design's way (one process per seed, each paying the imports and the pre-training again), on
calibration seeds only (>= 1000).

    nice -n 19 python benchmarks/gara_sam/seeds.py [--seeds 1000,...] [--profile default]

Both ways use the profile's sizes and the same draws (each arm's own generator per seed), so every
adapter's last loss must come out the same bit for bit: the script checks it, and prints the wall
seconds of each way (a child process's imports are part of its cost), their ratio stage way / one
process per seed. No seed dimension in the tensors: peft's LoRA wraps one model, and the adapters'
step counts fit the budget one after another. ``--smoke`` runs it at tiny sizes in seconds (what CI
runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402


def run(profile: str, seeds: list[int], pretrain_each: bool = False) -> dict:
    """{seed: {arm: last loss}}: the stage's adaptation of each seed after one shared pre-training
    (or, with ``pretrain_each``, the pre-training again for every seed, as one process per seed did)."""
    from stages.common.device import limit_threads
    from stages.common.runtime.params import load_study
    from stages.gara_sam.net import to_tensor
    from stages.gara_sam.params import PARAMS
    from stages.gara_sam.prepare import build_base, build_seed
    from stages.gara_sam.train import ADAPT_ARMS, adapt, pretrain

    limit_threads()
    _, p = load_study("gara_sam", PARAMS, profile=profile)
    tp = p.train
    out = {}
    base = None
    for seed in seeds:
        if base is None or pretrain_each:
            b = build_base(p.prepare)
            base, _ = pretrain(to_tensor(b["pre_x"], image=True), to_tensor(b["pre_y"]), tp.width, tp.pretrain,
                               p.prepare.base_seed, progress=False)
        d = build_seed(p.prepare, seed, progress=False)
        x, y = to_tensor(d["adapt_x"], image=True), to_tensor(d["adapt_y"])
        out[seed] = {arm: float(adapt(arm, base, x, y, tp.adapt, seed, progress=False)[2][-1]) for arm in ADAPT_ARMS}
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":          # one seed in its own process
        print(json.dumps(run(sys.argv[2], [int(sys.argv[3])], pretrain_each=True)))
        return
    ap = seed_parser(__doc__)
    a, seeds = parse_seeds(ap)
    print(f"profile {a.profile}, seeds {seeds}", flush=True)
    t0 = time.perf_counter()
    one = {}
    for s in seeds:
        res = subprocess.run([sys.executable, __file__, "--child", a.profile, str(s)], capture_output=True,
                             text=True, check=True, cwd=ROOT)
        one.update({int(k): v for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items()})
    t_one = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", "import json, sys; sys.path.insert(0, '.'); "
                          "from benchmarks.gara_sam.seeds import run; "
                          f"print(json.dumps(run({a.profile!r}, {seeds!r})))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    stage = {int(k): v for k, v in json.loads(res.stdout.strip().splitlines()[-1]).items()}
    t_stage = time.perf_counter() - t0
    if stage != one:
        raise SystemExit(f"the two ways differ: {stage} vs {one}")
    print(f"same last losses both ways ({len(seeds)} seeds x 3 arms)", flush=True)
    print(f"wall s: one process per seed {t_one:.1f}, the stage's way (one process, one pre-training) "
          f"{t_stage:.1f}; ratio stage / one per seed {t_stage / t_one:.2f}", flush=True)


if __name__ == "__main__":
    main()
