"""hephaestus_qosd calibration, on calibration seeds only (>= 1000, never a verdict seed): which
classical baseline the cost musts compare with, whether their control (Forge alone at
Hephaestus's evaluation budget) sees the generative parts, and what five seeds cost.

For each calibration seed it runs the study's own functions with the profile's settings
(prepare.seed_graphs, train.train_seed, evaluate.evaluate_seed and evaluate.summarise: the same
draws a verdict seed makes), then judges each candidate check as the ledger would
(stages.common.inference.judge: the 90 % t-interval of the per-seed figure):
- the cost musts, per non-linear cost kind, under each baseline design of ``--designs``: the mean
  paired ratio cost(Hephaestus) / cost(baseline) < 1, and the control, the same ratio for
  ``forge_search`` (Forge + a local search of as many repaired candidates as Refine evaluates,
  no Morph, no Refine), judged by the same rule. Designs: ``greedy`` (the contract v1 baseline,
  untrimmed), ``greedy_trim`` (the greedy then Forge's trim: issue 41's), ``greedy_search`` (the
  trimmed greedy + a local search of the same budget, each candidate repaired by the greedy and
  trimmed: the classical method with Hephaestus's trim and evaluation budget);
- the generative parts against the same-budget search (hephaestus / forge_search < 1, pooled over
  the non-linear kinds), beside the Refine ablation (morph), the untrained Morph (blind) and the
  first batch alone;
- the gap to the optimum (<= 0.10), for Hephaestus and Forge alone;
- and, as the contract v1 calibration did, the share of instances on which Morph's decoded mean,
  without the repair, is feasible (what makes every returned sample feasible is the repair).

    nice -n 10 python -m benchmarks.hephaestus_qosd.calibration [--seeds 1000,...] [--set train.steps=300]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, two seeds.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402

DESIGNS = ("greedy", "greedy_trim", "greedy_search")


def main() -> None:
    ap = seed_parser(__doc__, sets=True)
    ap.add_argument("--designs", default=",".join(DESIGNS), help="baselines of the cost musts to judge")
    a, seeds = parse_seeds(ap)
    designs = a.designs.split(",")

    import numpy as np

    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.hephaestus_qosd.cvae import decode_mean, edge_features, initial_model
    from stages.hephaestus_qosd.evaluate import evaluate_seed, summarise
    from stages.hephaestus_qosd.params import PARAMS
    from stages.hephaestus_qosd.prepare import seed_graphs
    from stages.hephaestus_qosd.qosd import forge, is_feasible
    from stages.hephaestus_qosd.train import train_seed

    limit_threads(1)
    p = study_params("hephaestus_qosd", PARAMS, a)
    pp, tp, ep, fp = p.prepare, p.train, p.evaluate, p.forge
    costs = pp.costs
    print(f"profile {a.profile}{' with ' + ', '.join(a.set) if a.set else ''}: {pp.n_nodes}-node graphs, "
          f"{pp.n_train} training and {pp.n_test} test graphs per family, costs {costs}; Refine "
          f"{ep.refine.iterations} x {ep.refine.batch} samples; calibration seeds {seeds}", flush=True)
    figs, cpu, raw_ok = {}, {}, {}
    for s in seeds:
        t0 = time.process_time()
        g = seed_graphs(pp, s)
        t_prep = time.process_time() - t0
        tr = train_seed(g["train"], costs, tp, fp, s, progress=False)
        t0 = time.process_time()
        rows, c = evaluate_seed(g["test"], costs, tr["model"], initial_model(tp, s).eval(), ep, fp, s)
        t_eval = time.process_time() - t0
        figs[s] = summarise(rows, costs)
        cpu[s] = {"prepare": t_prep, **tr["cpu"], "evaluate": t_eval, **c}
        raw = []
        for gr in g["test"]:
            for kind in costs:
                inst = gr.with_kind(kind)
                raw.append(is_feasible(inst, decode_mean(tr["model"], edge_features(inst, forge(inst, fp.step_frac, fp.credit))) * inst.T))
        raw_ok[s] = float(np.mean(raw))
        print(f"  seed {s}: CPU s " + ", ".join(f"{k} {v:.1f}" for k, v in cpu[s].items())
              + f"; labels {tr['figures']['label_cost_over_forge_mean']:.3f} x Forge", flush=True)

    def get(tree, dotted):
        for part in dotted.split("."):
            tree = tree.get(part) if isinstance(tree, dict) else None
        return tree

    def show(label, key, op, thr, rule="interval"):
        vals = [get(figs[s], key) for s in seeds]
        if any(v is None for v in vals):
            print(f"  {label:52s} (not run)")
            return None
        j = judge([float(v) for v in vals], op, thr, rule)
        iv = f" [{j.interval[0]:.4f}, {j.interval[1]:.4f}]" if j.interval else ""
        print(f"  {label:52s} per seed [{' '.join(f'{v:.4f}' for v in vals)}] mean {j.mean:.4f}{iv} -> {j.verdict}")
        return j.verdict

    print("\n== cost musts: hephaestus / baseline < 1 (control: forge_search / baseline < 1, same rule)")
    for d in designs:
        print(f" design {d}:")
        for kind in costs:
            if kind not in ("quadratic", "fixed_charge"):
                continue
            own = show(f"{kind}: hephaestus / {d}", f"{kind}.hephaestus.ratio_vs_{d}_mean", "<", 1.0)
            ctl = show(f"{kind}: control forge_search / {d}", f"{kind}.forge_search.ratio_vs_{d}_mean", "<", 1.0)
            show(f"{kind}: forge alone / {d}", f"{kind}.forge.ratio_vs_{d}_mean", "<", 1.0)
            print(f"    -> must {'not specific' if own == ctl == 'holds' else own}")
    print("\n== the generative parts against the same-budget search (ratio to forge_search < 1)")
    for arm in ("hephaestus", "morph", "blind", "forge"):
        show(f"non-linear: {arm} / forge_search", f"nonlinear.{arm}.ratio_vs_forge_search_mean", "<", 1.0)
    for kind in costs:
        show(f"{kind}: hephaestus / forge_search", f"{kind}.hephaestus.ratio_vs_forge_search_mean", "<", 1.0)
        show(f"{kind}: blind / forge_search", f"{kind}.blind.ratio_vs_forge_search_mean", "<", 1.0)
        show(f"{kind}: first batch, hephaestus / forge_search", f"{kind}.first_batch.hephaestus_over_forge_search_mean",
             "<", 1.0)
    print("\n== gap to the optimum (<= 0.10)")
    show("non-linear: hephaestus", "hephaestus_gap_to_optimum_nonlinear_mean", "<=", 0.10)
    for arm in ("forge", "forge_search", "greedy_search", "greedy_trim", "greedy", "blind", "morph"):
        show(f"non-linear: {arm}", f"nonlinear.{arm}.gap_to_optimum_mean", "<=", 0.10)
    print("\n== feasibility: every method's perturbation passed the Dijkstra check on every instance "
          "(evaluate_seed stops otherwise); Morph's decoded mean without the repair is feasible on "
          + ", ".join(f"{raw_ok[s]:.2f}" for s in seeds) + " of the instances")
    tot = {k: sum(c[k] for c in cpu.values()) for k in next(iter(cpu.values()))}
    print(f"\nCPU s over {len(seeds)} seeds: " + ", ".join(f"{k} {v:.1f}" for k, v in tot.items())
          + f"; prepare + labels + CVAE + evaluate {tot['prepare'] + tot['label'] + tot['cvae'] + tot['evaluate']:.1f}")


if __name__ == "__main__":
    main()
