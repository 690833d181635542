"""escort_belief: the verdict seeds in batches against one seed after another, on calibration seeds.

    OMP_NUM_THREADS=1 python benchmarks/escort_belief/seeds.py [--seeds 1000,1001,1002,1003,1004]
        [--profile default] [--today-reps-dmax 30] [--today-episodes 64] [--skip-today] [--matrix 2] [--smoke]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, seeds 1000,1001, and the
one seed as today with 3 replications at the largest d and 2 episodes.

The train stage runs the seeds' replications (and light-dark episodes) as the rows of batches, each
row drawing from its own seed's generator (stages/escort_belief/batch.py); how many whole seeds
share a batch is batch.seed_groups' choice (the batch's kernel matrices within batch.CACHE_BYTES).
This script times, in one process, with the profile's sizes (process time: user + sys of this
process; wall beside):

1. **as the stage runs**: the train stage's compute (the filtering of every dimension by every
   method, and the light-dark episodes) for all ``--seeds``, grouped by batch.seed_groups;
2. **one batch**: the same with every seed in one batch;
3. **sequential**: the same one seed after another (the same functions, one seed each); it checks
   that every seed's particles and episode figures are the same bit for bit in all three;
4. **one seed as today**: the first seed alone with the sizes the study used when it ran one
   seed (``--today-reps-dmax`` replications at the largest d, ``--today-episodes`` light-dark
   episodes): the budget's reference, measured with today's kernels (the budget: five seeds <=
   2.5x one seed's compute; the code before the move is timed apart, README: escort_belief);

and the evaluate stage's scoring for the seeds and for the one seed as today (it runs seed by
seed either way). It prints the timings, the ratios and the seeds' ESCORT/PF ratios. Calibration
seeds only (>= 1000): the verdict seeds are never run here (docs/VERDICTS.md).

``--matrix N`` times instead the train stage's compute as separate processes (each one thread,
each paying its start and imports, as a stage does), in wall seconds: all seeds in one process
(the stage before it became a matrix stage), the seeds in N shards side by side (the matrix stage
``escort_belief-train@0..N-1`` as the Prefect flow runs it), the same shards one after another
(as ``dvc repro`` runs them), and one process per seed one after another (the reference: the
seeds one after another); it checks that every seed's particles and light-dark figures are the
same bit for bit in all four.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


class Clock:
    """Process and wall seconds of a block."""

    def __enter__(self):
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu, self.wall = time.process_time() - self.cpu, time.perf_counter() - self.wall


def problems(pp, seeds) -> dict:
    from stages.escort_belief.prepare import build_problems

    arr = {}
    for s in seeds:
        arr.update({f"s{s}/{k}": v for k, v in build_problems(pp, s).items()})
    return arr


def train(arr: dict, pp, tp, seeds, cache_bytes=None) -> tuple[dict, dict]:
    """The train stage's compute for ``seeds`` (batched as batch.seed_groups allows with
    ``cache_bytes``): ({seed: {(d, method): particles}}, {seed: {method: light-dark episodes}})."""
    from stages.escort_belief.keys import METHODS
    from stages.escort_belief.train import lightdark_record, run_episodes_seeds, run_mixture_seeds, stein_config

    parts = {s: {} for s in seeds}
    for d in pp.dims:
        out, _ = run_mixture_seeds(arr, d, tp, seeds, cache_bytes=cache_bytes)
        for s in seeds:
            parts[s].update({(d, k): v for k, v in out[s].items()})
    ld = {s: {} for s in seeds}
    for method in METHODS:
        cfg = None if method == "pf" else stein_config(tp.lightdark.stein, tp.escort if method == "escort" else None)
        res = run_episodes_seeds(method, tp.lightdark, cfg, seeds, cache_bytes=cache_bytes)
        for s in seeds:
            ld[s][method] = lightdark_record(res[s])
    return parts, ld


def evaluate(arr: dict, parts: dict, ld: dict, pp, ep, seeds) -> dict:
    """The evaluate stage's scoring, seed by seed: {seed: ESCORT/PF MMD ratio at the largest d}."""
    from stages.escort_belief.evaluate import lightdark_metrics, score_dim, summarise

    flat = {f"s{s}/d{d}/{k}": v for s in seeds for (d, k), v in parts[s].items()}
    out = {}
    for s in seeds:
        scores = {d: score_dim(arr, flat, d, ep, s) for d in pp.dims}
        out[s] = {"ratio": summarise(scores, pp.dims, ep, s)["ratios"]["mmd"]["escort_over_pf_dmax"],
                  "margin": lightdark_metrics(ld[s], ep)["escort_margin"]}
    return out


def same(a: dict, b: dict) -> bool:
    import numpy as np

    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def digest(parts: dict, ld: dict, seeds) -> dict:
    """{seed: sha256 of its particles and light-dark figures}: compares runs in other processes."""
    import hashlib
    import json

    out = {}
    for s in seeds:
        h = hashlib.sha256()
        for k in sorted(parts[s]):
            h.update(repr(k).encode())
            h.update(parts[s][k].tobytes())
        h.update(json.dumps(ld[s], sort_keys=True).encode())
        out[str(s)] = h.hexdigest()
    return out


def worker(a) -> None:
    """One shard's train compute in this process; prints its digests as JSON on the last line."""
    import json

    from stages.common.runtime.params import load_study
    from stages.escort_belief.params import EscortBeliefParams

    seeds = [int(s) for s in a.seeds.split(",")]
    _, p = load_study("escort_belief", EscortBeliefParams, profile=a.profile)
    arr = problems(p.prepare, seeds)                   # the prepare stage's output: not timed
    parts, ld = train(arr, p.prepare, p.train, seeds)
    print(json.dumps(digest(parts, ld, seeds)), flush=True)


def run_workers(shards: list[list[int]], profile: str, parallel: bool) -> tuple[float, dict]:
    """Wall seconds of one worker process per shard (all at once, or one after another), and the
    seeds' digests."""
    import json
    import os
    import subprocess

    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    cmds = [[sys.executable, __file__, "--worker", "--profile", profile, "--seeds", ",".join(map(str, sh))]
            for sh in shards if sh]
    t0 = time.perf_counter()
    if parallel:
        procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, text=True, cwd=REPO) for c in cmds]
        outs = [p.communicate()[0] for p in procs]
        codes = [p.returncode for p in procs]
    else:
        done = [subprocess.run(c, env=env, stdout=subprocess.PIPE, text=True, cwd=REPO) for c in cmds]
        outs, codes = [d.stdout for d in done], [d.returncode for d in done]
    wall = time.perf_counter() - t0
    if any(codes):
        raise SystemExit(f"a worker failed (exit codes {codes})")
    found = {}
    for o in outs:
        found.update(json.loads(o.strip().splitlines()[-1]))
    return wall, found


def matrix(seeds: list[int], n: int, profile: str) -> None:
    shards = [seeds[i::n] for i in range(n)]
    print(f"profile {profile}: the train stage's compute for seeds {seeds} in separate one-thread processes "
          f"(wall seconds; {os.cpu_count()} cores here)", flush=True)
    runs = {}
    for label, groups, parallel in (
            ("one process, all seeds batched", [seeds], False),
            (f"{n} shards side by side (the matrix stage in the Prefect flow)", shards, True),
            (f"{n} shards one after another (the matrix stage in dvc repro)", shards, False),
            ("one process per seed, one after another (reference)", [[s] for s in seeds], False)):
        runs[label] = run_workers(groups, profile, parallel)
        print(f"  {label}: {runs[label][0]:.1f} s", flush=True)
    ref_label = list(runs)[-1]
    ref_wall, ref_digest = runs[ref_label]
    identical = all(d == ref_digest for _, d in runs.values())
    for label, (wall, _) in runs.items():
        print(f"  {label} / reference: {wall / ref_wall:.2f}", flush=True)
    print(f"every seed's particles and light-dark figures {'are' if identical else 'are NOT'} the same in all "
          f"four, bit for bit", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1000,1001,1002,1003,1004", help="calibration seeds (>= 1000)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--today-reps-dmax", type=int, default=30, help="replications at the largest d when one seed ran")
    ap.add_argument("--today-episodes", type=int, default=64, help="light-dark episodes when one seed ran")
    ap.add_argument("--skip-today", action="store_true", help="leave out the one-seed reference")
    ap.add_argument("--matrix", type=int, metavar="N", help="time N shards as processes (see above) instead")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.profile, a.seeds, a.today_reps_dmax, a.today_episodes = "smoke", "1000,1001", 3, 2
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < 1000:
        ap.error(f"--seeds {a.seeds}: calibration seeds are >= 1000; the verdict seeds are never run here")
    if a.worker:
        return worker(a)
    if a.matrix:
        if a.matrix < 1:
            ap.error("--matrix needs at least one shard")
        return matrix(seeds, a.matrix, a.profile)

    from stages.common.runtime.params import load_study
    from stages.escort_belief.batch import CACHE_BYTES
    from stages.escort_belief.params import EscortBeliefParams

    import ot  # noqa: F401 - imported before any clock starts: no timing pays for an import
    import scipy.stats  # noqa: F401

    _, p = load_study("escort_belief", EscortBeliefParams, profile=a.profile)
    pp, tp, ep = p.prepare, p.train, p.evaluate
    print(f"profile {a.profile}: dims {pp.dims}, {pp.reps_at(max(pp.dims))} replications per seed at d = "
          f"{max(pp.dims)}, {tp.lightdark.episodes} light-dark episodes per seed; seeds {seeds}", flush=True)
    arr = problems(pp, seeds)

    with Clock() as staged:
        parts_b, ld_b = train(arr, pp, tp, seeds)
    print(f"as the stage runs (whole seeds batched within {CACHE_BYTES / 2 ** 20:g} MiB of kernel matrices): train "
          f"{staged.cpu:.1f} s process ({staged.wall:.1f} s wall)", flush=True)
    with Clock() as one_batch:
        parts_o, ld_o = train(arr, pp, tp, seeds, cache_bytes=float("inf"))
    print(f"one batch, all {len(seeds)} seeds: train {one_batch.cpu:.1f} s process ({one_batch.wall:.1f} s wall)",
          flush=True)
    cpu = wall = 0.0
    identical = all(same(parts_o[s], parts_b[s]) and ld_o[s] == ld_b[s] for s in seeds)
    for s in seeds:
        with Clock() as one:
            parts_s, ld_s = train(arr, pp, tp, [s])
        cpu, wall = cpu + one.cpu, wall + one.wall
        identical &= same(parts_s[s], parts_b[s]) and ld_s[s] == ld_b[s]
    print(f"sequential, one seed after another: train {cpu:.1f} s process ({wall:.1f} s wall); every seed's "
          f"particles and light-dark figures {'are' if identical else 'are NOT'} the same in all three, bit for bit",
          flush=True)
    print(f"  process time / sequential: as the stage runs {staged.cpu / cpu:.2f}, one batch {one_batch.cpu / cpu:.2f}",
          flush=True)
    with Clock() as ev:
        figs = evaluate(arr, parts_b, ld_b, pp, ep, seeds)
    print(f"evaluate, {len(seeds)} seeds: {ev.cpu:.1f} s process ({ev.wall:.1f} s wall); calibration figures: "
          + ", ".join(f"seed {s} ESCORT/PF {f['ratio']:.3f} margin {f['margin']:.1f}" for s, f in figs.items()),
          flush=True)
    if a.skip_today:
        return
    today_pp = pp.model_copy(update={"reps_dmax": a.today_reps_dmax})
    today_tp = tp.model_copy(update={"lightdark": tp.lightdark.model_copy(update={"episodes": a.today_episodes})})
    arr1 = problems(today_pp, seeds[:1])
    with Clock() as today:
        parts1, ld1 = train(arr1, today_pp, today_tp, seeds[:1])
    with Clock() as today_ev:
        evaluate(arr1, parts1, ld1, today_pp, ep, seeds[:1])
    print(f"one seed as today ({seeds[0]}; {a.today_reps_dmax} replications at d = {max(pp.dims)}, "
          f"{a.today_episodes} episodes): train {today.cpu:.1f} s process ({today.wall:.1f} s wall), evaluate "
          f"{today_ev.cpu:.1f} s ({today_ev.wall:.1f} s wall)", flush=True)
    print(f"  {len(seeds)} seeds as the stage runs / one seed as today: train {staged.cpu / today.cpu:.2f}, train + "
          f"evaluate {(staged.cpu + ev.cpu) / (today.cpu + today_ev.cpu):.2f} (process; the budget is 2.5)", flush=True)


if __name__ == "__main__":
    main()
