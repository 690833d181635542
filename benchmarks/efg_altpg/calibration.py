"""efg_altpg calibration, on calibration seeds only (>= 1000, never a verdict seed): the train
stage's runs for five seeds, each claim's per-seed figure and its control's, judged as the ledger
judges the verdict seeds (stages.common.inference.judge, rule interval), and the compute it took.

    nice -n 19 python -m benchmarks.efg_altpg.calibration [--seeds 1000,...] [--profile default]
        [--set train.leduc_poker.iterations=4000 ...]

What it was used for (README: efg_altpg, Calibration): whether the average-iterate control of
the regularization checks sees the paper's point (the last iterate), whether the unregularized
last iterate fails the must's check (its control), and whether five seeds of the default profile
fit the study's budget. ``--set`` changes a key of the profile (dotted, under the study's
section) for this run only. It builds the games itself (Kuhn and Leduc from OpenSpiel, each
seed's random games as prepare draws them) in a temporary folder and writes nothing into the
checkout. ``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


# (label, metric, op, threshold, control or None): the claims of stages/efg_altpg/claims.yaml
CHECKS = [
    ("kuhn_last_iterate (must)", "kuhn_poker.reg_last_max", "<=", 0.05, "kuhn_poker.unreg_last_max"),
    ("kuhn_regularization_needed (must)", "kuhn_poker.ratio_min", ">=", 2.0, "kuhn_poker.avg_ratio_min"),
    ("leduc_regularization_needed", "leduc_poker.ratio_min", ">=", 2.0, "leduc_poker.avg_ratio_min"),
    ("iterations_polynomial", "rate.curvature_ratio_max", "<=", 2.0, None),
    ("sampled_last_iterate", "sampled.last_max", "<=", 0.05, None),
    ("random_efg_last_iterate", "random.reg_last_max", "<=", 0.05, "random.unreg_last_max"),
]
CONTEXT = ["kuhn_poker.{v}.reg_last", "kuhn_poker.{v}.unreg_last", "kuhn_poker.{v}.ratio", "kuhn_poker.{v}.avg_ratio",
           "kuhn_poker.{v}.reg_avg_late_mean", "kuhn_poker.{v}.unreg_avg_late_mean",
           "leduc_poker.{v}.ratio", "leduc_poker.{v}.avg_ratio", "leduc_poker.{v}.reg_last",
           "leduc_poker.{v}.reg_step", "leduc_poker.{v}.unreg_step", "rate.{v}.slope", "sampled.{v}.last",
           "random.ratio_ge2_share"]


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    a, seeds = parse_seeds(ap)

    import contextlib

    import pyspiel

    from stages.common.claims import lookup
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.efg_altpg.evaluate import seed_metrics
    from stages.efg_altpg.games import VARIANTS, load_game
    from stages.efg_altpg.params import PARAMS
    from stages.efg_altpg.prepare import write_random_games
    from stages.efg_altpg.seqform import build
    from stages.efg_altpg.train import train_all

    limit_threads()
    p = study_params("efg_altpg", PARAMS, a)
    t0, c0 = time.perf_counter(), time.process_time()
    sfs, pygames = {}, {}
    for name in ("kuhn_poker", "leduc_poker"):
        pygames[name] = pyspiel.load_game(name)
        sfs[name] = build(pygames[name])
    with tempfile.TemporaryDirectory() as tmp:
        random_games = {}
        for s in seeds:
            out = Path(tmp) / f"seed_{s}"
            out.mkdir()
            random_games[s] = {}
            for name in write_random_games(p.prepare, s, out):
                game = load_game(out, name)
                random_games[s][name] = (build(game), game)
        prep_cpu = time.process_time() - c0

        @contextlib.contextmanager
        def quiet_bar(desc, total):
            class Bar:
                def update(self, n):
                    pass
            t = time.process_time()
            yield Bar()
            print(f"  {desc}: {time.process_time() - t:.1f} CPU s", flush=True)

        per_seed, _, timing = train_all(sfs, pygames, random_games, p.train, seeds, quiet_bar)
    cpu = time.process_time() - c0
    ms = {s: seed_metrics(per_seed[s], p.evaluate.ci_level) for s in seeds}
    print(f"\nprofile {a.profile} {' '.join(a.set)}; calibration seeds {seeds}; {cpu:.1f} CPU s "
          f"(games {prep_cpu:.1f}), {time.perf_counter() - t0:.1f} s wall; parts (wall s): "
          + ", ".join(f"{k} {v:.1f}" for k, v in timing.items()))
    for label, metric, op, thr, control in CHECKS:
        for what, key in (("", metric), ("  control ", control)):
            if key is None:
                continue
            v = [lookup(ms[s], key) for s in seeds]
            j = judge(v, op, thr, "interval")
            iv = "" if j.interval is None else f"[{j.interval[0]:.4g}, {j.interval[1]:.4g}]"
            print(f"{what}{label if not what else key}: per seed [{', '.join(f'{x:.4g}' for x in v)}] "
                  f"mean {j.mean:.4g} 90% {iv} {op} {thr} -> {j.verdict}")
    print("context (per seed):")
    for pat in CONTEXT:
        for v in (VARIANTS if "{v}" in pat else [None]):
            key = pat.format(v=v) if v else pat
            vals = [lookup(ms[s], key) for s in seeds]
            print(f"  {key}: [{', '.join('-' if x is None else f'{x:.4g}' for x in vals)}]")


if __name__ == "__main__":
    main()
