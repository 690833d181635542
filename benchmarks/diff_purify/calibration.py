"""diff_purify calibration, on calibration seeds only (>= 1000, never a verdict seed): the attack
radius, the purifier's settings and the perturbation score's weight, chosen by rules fixed here
before any of them ran, then every claim and its control judged as the ledger judges the verdict
seeds, and the compute it took. Each calibration seed draws its own split of the 1797 digits (its
own training and test digits, stages/diff_purify/data.py) and trains its own networks with the
stages' functions (train.train_seeds, evaluate.evaluate_seed).

    nice -n 19 python -m benchmarks.diff_purify.calibration [--seeds 1000,...] [--profile default]
        [--parts radius,purifier,lam,claims] [--set purify.eta=0.3 ...] [--cache DIR]

Parts, each printing per-seed figures and the mean over the seeds:
- ``radius``: the undefended classifier's accuracy under PGD (the stage's attack: ``pgd_steps``
  of eps / 8, a random start) at each radius of ``--radii``. Rule: the main radius is the smallest
  one at which the undefended accuracy, mean over the seeds, is at most 0.5 (the attack takes at
  least half the digits: a real attack, with the smallest perturbation that does it). The defences
  play no part in this choice.
- ``purifier``: the prior-only defence (lam = 0, the Score-Opt analogue, the baseline of the
  headline must) for every (steps, eta) of ``--steps-grid`` x ``--eta-grid`` (noise levels
  sigma_max -> sigma_min of the profile), clean accuracy and accuracy under BPDA+EOT at
  ``--main-eps``. Rule: the setting with the largest mean over the seeds of (clean + BPDA+EOT) / 2
  for the prior-only defence: the baseline gets its own best trade-off, and the clean-accuracy
  limit of the must clean_drop_small plays no part in the choice.
- ``lam``: at the purifier setting of the profile (``--set`` one), AAOpt (the adversarial
  perturbation score) and the control (the score learnt from random sign noise) for every lam of
  ``--lam-grid`` and pert_sigma of ``--pert-sigma-grid``, by the same rule, each its own: the
  control gets the same tuning as the method.
- ``claims``: the stages' whole evaluation (every defence, attack and radius of the profile) and
  every claim of stages/diff_purify/claims.yaml with its control, judged by stages.common.claims
  over these seeds as the ledger judges the verdict seeds; CPU seconds of prepare, train and
  evaluate, and the five-seed total.

Trained networks are kept in ``--cache`` (outside the checkout; keyed by seed and the train
params) so the parts can run one after another. It writes nothing into the checkout. ``--smoke``
runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds, small grids.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v]


def trained(p, seed: int, cache: Path) -> tuple[dict, tuple, dict]:
    """(nets, the seed's split, CPU seconds of its prepare and train) of ``seed``, trained with the
    stage's function or read back from ``cache``."""
    import torch

    from stages.diff_purify.core import nets_from_state
    from stages.diff_purify.data import load_digits_split
    from stages.diff_purify.train import train_seeds

    t0 = time.process_time()
    split = load_digits_split(p.prepare.test_fraction, seed)
    cpu = {"prepare": time.process_time() - t0}
    key = hashlib.sha256(json.dumps([seed, p.prepare.model_dump(), p.train.model_dump()], sort_keys=True)
                         .encode()).hexdigest()[:16]
    path = cache / f"seed{seed}-{key}.pt"
    cfg = {"clf_hidden": p.train.clf_hidden, "score_hidden": p.train.score_hidden}
    if path.exists():
        blob = torch.load(path, weights_only=True)
        return nets_from_state(blob["nets"], cfg), split, {**cpu, **blob["cpu"]}
    out, train_cpu = train_seeds({seed: split[:2]}, p.train, log=lambda s: print(s, flush=True))
    cpu.update(train_cpu)
    cache.mkdir(parents=True, exist_ok=True)
    torch.save({"nets": {k: n.state_dict() for k, n in out[seed]["nets"].items()}, "cpu": train_cpu}, path)
    return out[seed]["nets"], split, cpu


def bpda_accuracy(nets, x, y, pur, eps: float, ep, g) -> tuple[float, float]:
    """(clean accuracy, accuracy under BPDA+EOT at ``eps``) of purifier ``pur``, as the stage measures them."""
    from stages.diff_purify.core import bpda_eot, defended_logits

    clf = nets["classifier"]
    clean = float((defended_logits(clf, pur, x, ep.defence_reps).argmax(1) == y).float().mean())
    _, fooled = bpda_eot(clf, pur, x, y, eps, eps / 8, ep.bpda_steps, ep.eot, g, check_every=ep.check_every,
                         defence_reps=ep.defence_reps)
    return clean, 1.0 - float(fooled.float().mean())


def table(title: str, results: dict, seeds: list[int]) -> dict:
    """Print ``results`` ({setting: {seed: (clean, robust)}}) with the mean of each and the
    score (clean + robust) / 2; returns {setting: mean score}."""
    import numpy as np

    print(title, flush=True)
    scores = {}
    for setting, by_seed in results.items():
        c = np.mean([by_seed[s][0] for s in seeds])
        r = np.mean([by_seed[s][1] for s in seeds])
        scores[setting] = (c + r) / 2
        print(f"  {setting}: clean {c:.3f}, BPDA+EOT {r:.3f}, (clean + BPDA) / 2 {scores[setting]:.4f}; per seed "
              + " ".join(f"{by_seed[s][0]:.3f}/{by_seed[s][1]:.3f}" for s in seeds), flush=True)
    best = max(scores, key=scores.get)
    print(f"  -> best by the rule: {best}", flush=True)
    return scores


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--parts", default="radius,purifier,lam,claims")
    ap.add_argument("--radii", default="0.05,0.1,0.15,0.2")
    ap.add_argument("--main-eps", type=float, default=None, help="radius of the purifier and lam parts "
                                                                     "(default: the profile's main_eps)")
    ap.add_argument("--steps-grid", default="5,10,20")
    ap.add_argument("--eta-grid", default="0.15,0.3,0.5")
    ap.add_argument("--lam-grid", default="0.5,1,2,4")
    ap.add_argument("--pert-sigma-grid", default="0.05,0.1")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "diff_purify_calibration"))
    a, seeds = parse_seeds(ap, steps_grid="2,5", eta_grid="0.3", lam_grid="1", pert_sigma_grid="0.05",
                           radii="0.05,0.1")

    import numpy as np
    import torch

    from stages.common.device import limit_threads
    from stages.diff_purify.core import pgd, purify
    from stages.diff_purify.params import PARAMS

    limit_threads()
    p = study_params("diff_purify", PARAMS, a)
    ep, pp = p.evaluate, p.purify
    main_eps = a.main_eps if a.main_eps is not None else ep.main_eps
    parts = a.parts.split(",")
    cache = Path(a.cache)
    print(f"profile {a.profile}, calibration seeds {seeds}; purify {pp.model_dump()}; "
          f"{ep.n_attack} test digits a seed at most, BPDA {ep.bpda_steps} steps x {ep.eot} EOT", flush=True)
    data = {}
    for s in seeds:
        if set(parts) & {"radius", "purifier", "lam"}:
            data[s] = trained(p, s, cache)

    def test_set(s):
        _, _, xte, yte = data[s][1]
        n = min(ep.n_attack, len(yte))
        return torch.as_tensor(xte[:n]), torch.as_tensor(yte[:n])

    if "radius" in parts:
        radii = floats(a.radii)
        acc = {e: {} for e in radii}
        for s in seeds:
            x, y = test_set(s)
            clf = data[s][0]["classifier"]
            g = torch.Generator().manual_seed(s * 1000 + 7)
            for e in radii:
                xa = pgd(clf, x, y, e, e / 8, ep.pgd_steps, g)
                with torch.no_grad():
                    acc[e][s] = float((clf(xa).argmax(1) == y).float().mean())
        print("radius: undefended accuracy under PGD", flush=True)
        for e in radii:
            print(f"  eps {e}: mean {np.mean(list(acc[e].values())):.3f}; per seed "
                  + " ".join(f"{acc[e][s]:.3f}" for s in seeds), flush=True)
        chosen = [e for e in radii if np.mean(list(acc[e].values())) <= 0.5]
        print(f"  -> main radius by the rule: {chosen[0] if chosen else 'none of the grid'}", flush=True)

    if "purifier" in parts:
        res = {}
        for s in seeds:
            nets = data[s][0]
            x, y = test_set(s)
            t0 = time.process_time()
            for k in (int(v) for v in a.steps_grid.split(",")):
                for eta in floats(a.eta_grid):
                    g = torch.Generator().manual_seed(s * 1000 + 7)
                    pur = lambda z, k=k, eta=eta, g=g: purify(z, nets["prior"], None, k, pp.sigma_max,  # noqa: E731
                                                              pp.sigma_min, eta, 0.0, pp.pert_sigma, g)
                    res.setdefault(f"steps {k}, eta {eta}", {})[s] = bpda_accuracy(nets, x, y, pur, main_eps, ep, g)
            print(f"  seed {s}: purifier grid {time.process_time() - t0:.1f} CPU s", flush=True)
        table(f"purifier: prior-only at eps {main_eps} (sigma {pp.sigma_max} -> {pp.sigma_min})", res, seeds)

    if "lam" in parts:
        res = {"aaopt": {}, "aaopt_noise": {}}
        for s in seeds:
            nets = data[s][0]
            x, y = test_set(s)
            t0 = time.process_time()
            for arm, net in (("aaopt", "pert"), ("aaopt_noise", "pert_noise")):
                for lam in floats(a.lam_grid):
                    for ps in floats(a.pert_sigma_grid):
                        g = torch.Generator().manual_seed(s * 1000 + 7)
                        pur = lambda z, lam=lam, ps=ps, g=g, net=net: purify(  # noqa: E731
                            z, nets["prior"], nets[net], pp.steps, pp.sigma_max, pp.sigma_min, pp.eta, lam, ps, g)
                        res[arm].setdefault(f"lam {lam}, pert_sigma {ps}", {})[s] = bpda_accuracy(
                            nets, x, y, pur, main_eps, ep, g)
            print(f"  seed {s}: lam grid {time.process_time() - t0:.1f} CPU s", flush=True)
        for arm in res:
            table(f"lam: {arm} at eps {main_eps} (steps {pp.steps}, eta {pp.eta})", res[arm], seeds)

    if "claims" in parts:
        from stages.common.claims import evaluate, load_claims
        from stages.common.seeds import per_seed_metrics
        from stages.diff_purify.evaluate import evaluate_seed

        per, cpu = {}, {}
        for s in seeds:
            nets, (_, _, xte, yte), c = trained(p, s, cache)
            t0 = time.process_time()
            r = evaluate_seed(xte, yte, nets, pp, ep, s, log=lambda m: print(m, flush=True))
            c["evaluate"] = time.process_time() - t0
            per[s], cpu[s] = r["metrics"], c
            m = r["metrics"]
            print(f"  seed {s}: clean drop prior {m['clean_drop_points']['prior']:.2f}, aaopt "
                  f"{m['clean_drop_points']['aaopt']:.2f} points; CPU s " + ", ".join(f"{k} {v:.1f}" for k, v in c.items()),
                  flush=True)
        metrics = per_seed_metrics(per)
        print(f"claims on calibration seeds {seeds} (stages.common.claims, as the ledger judges them):")
        for row in evaluate(load_claims(REPO / "stages/diff_purify/claims.yaml"), metrics, seeds):
            if row["verdict"] == "retired":
                continue
            ctl = row.get("control") or {}
            iv = row.get("interval") or [float("nan")] * 2
            vals = " ".join(f"{v:+.3f}" if v is not None else "-" for v in (row.get("per_seed") or {}).values())
            mean = row.get("mean", row.get("measured"))
            line = (f"  {row['id']} ({row['level']}): mean {mean if mean is not None else float('nan'):+.4f} "
                    f"[{iv[0]:+.4f}, {iv[1]:+.4f}] "
                    f"{row['verdict']}; per seed {vals}")
            if ctl:
                civ = ctl["interval"] or [float("nan")] * 2
                line += f"; control {ctl['mean']:+.4f} [{civ[0]:+.4f}, {civ[1]:+.4f}] {ctl['verdict']}"
            print(line, flush=True)
        parts_cpu = {k: sum(cpu[s].get(k, 0.0) for s in seeds) for k in cpu[seeds[0]]}
        print(f"CPU s over {len(seeds)} seeds (prepare, train, evaluate compute; imports and the stages' "
              f"saving not counted): " + ", ".join(f"{k} {v:.1f}" for k, v in parts_cpu.items())
              + f"; total {sum(parts_cpu.values()):.1f}", flush=True)


if __name__ == "__main__":
    main()
