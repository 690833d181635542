"""attr_analogy calibration, on calibration seeds only (>= 1000, never a verdict seed): what the
claims of the contract v2 would read, before they were registered.

    nice -n 10 python benchmarks/attr_analogy/calibration.py [--seeds 1000,1001,1002,1003,1004] [--profile default]

Runs the study's own functions as the train and evaluate stages do (``shared_run`` once without
real text, ``seed_run`` per seed, ``seed_view`` / ``seed_metrics``), with the attribute models
and sizes of the profile's corpora (``stages/corpora/params.json``: the same p_k, s_k and pairs
as the corpora's truth.json), and prints per seed and judged as the ledger judges the verdict
seeds (``stages.common.inference.judge``: the 90 % t-interval of the per-seed mean):

1. the (iii) musts, on the sampled corpora with the paper's T(k1, k2) sets over k in [K+1, 3K]
   (minimum over the narrow and the broad spread): log M's mean accuracy - M's, and the share of
   its peak log M keeps at high embedding dimension (mean over [2K+1, 3K] / best) - M's; each
   beside its control, the same figure on corpora of the attribute MIXTURE (the attributes add
   up in M instead of multiplying: :func:`stages.attr_analogy.model.mixture_m`);
2. the figure of the retired ``logm_more_stable`` (M's drop from its peak to k = 3K - log M's),
   for context, and the per-setting accuracies behind the musts;
3. (ii) and the (iv) shoulds on the sampled corpora;
4. the process time of the shared part and of each seed (the budget: five seeds <= 5 min of
   compute for the whole study).

``--smoke`` runs it at tiny sizes in seconds (what CI runs): the smoke profile, seeds 1000, 1001.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def truths_from_params(profile: str) -> dict:
    """{corpus name: truth} as the corpora stage writes it (K, p_k, s_k, pairs), from
    stages/corpora/params.json's ``attributes`` entries of ``profile`` (no corpus is read)."""
    import json

    from stages.common.corpora.attributes import AttributeCorpusParams, spaced

    data = json.loads((REPO / "stages/corpora/params.json").read_text())["corpora"][profile]["attributes"]
    out = {}
    for entry in data["corpora"]:
        cp = AttributeCorpusParams(**entry)
        K = cp.attributes
        out[cp.name] = {"kind": "attributes", "attributes": K, "marginal": spaced(cp.marginal, K).tolist(),
                        "strength": spaced(cp.strength, K).tolist(), "pairs": cp.pairs}
    return out


def main() -> None:
    ap = seed_parser(__doc__)
    a, seeds = parse_seeds(ap)

    from types import SimpleNamespace

    from stages.attr_analogy.evaluate import seed_metrics, seed_view
    from stages.attr_analogy.params import AttrParams
    from stages.attr_analogy.train import check_corpora, analogy_sets, seed_run, shared_run
    from stages.common.device import limit_threads
    from stages.common.inference import judge
    from stages.common.runtime.params import load_study

    limit_threads()
    _, params = load_study("attr_analogy", AttrParams, profile=a.profile)
    p = params.train
    truths = truths_from_params(a.profile)
    K = check_corpora({n: SimpleNamespace(truth=t) for n, t in truths.items()}, p)
    ks = list(range(1, p.k_max + 1)) + [k for k in p.k_extra if k <= 2 ** K]
    q, qt = analogy_sets(K, p)
    sizes = ", ".join(f"{n} {t['pairs']:,d} pairs" for n, t in truths.items())
    print(f"profile {a.profile}: K = {K}, corpora {sizes}; "
          f"{len(qt)} T(k1, k2) analogies, {len(q)} flips; calibration seeds {seeds}", flush=True)

    c0 = time.process_time()
    shared = shared_run(truths, K, q, qt, ks, p)
    t_shared = time.process_time() - c0
    per, t_seed = {}, {}
    for s in seeds:
        c1 = time.process_time()
        r = seed_run(s, truths, K, q, qt, ks, p)
        res = {"K": K, "V": 2 ** K, "ks": ks, "n_paper_set": len(qt), "pair_base_words": p.pair_base_words,
               "saturation_corpus": p.saturation_corpus, "spread_order": list(p.spreads),
               "shared": shared, "per_seed": {str(s): r}}
        per[s] = seed_metrics(seed_view(res, s))
        t_seed[s] = time.process_time() - c1
        print(f"  seed {s}: {t_seed[s]:.1f} CPU s", flush=True)

    def get(m, dotted):
        for part in dotted.split("."):
            m = m[part]
        return m

    def row(label, key, op, threshold, fmt="{:+.4f}"):
        v = [get(per[s], key) for s in seeds]
        shown = ", ".join(fmt.format(x) for x in v)
        if len(v) >= 2:
            j = judge(v, op, threshold, "interval")
            lo, hi = j.interval
            print(f"  {label:<58} [{shown}] mean {fmt.format(j.mean)} 90% [{fmt.format(lo)}, {fmt.format(hi)}] "
                  f"-> {j.verdict}")
        else:
            print(f"  {label:<58} [{shown}]")

    w, cw = "paper_set.window.sampled", "control.paper_set.window.sampled"
    print(f"\n(iii) sampled corpora, T(k1, k2), k in [K+1, {3 * K}], min over the spreads; per seed, judged over the seeds")
    row("must  mean log M - M  (> 0)", f"{w}.mean_diff_min", ">", 0.0)
    row("  control: attribute mixture", f"{cw}.mean_diff_min", ">", 0.0)
    row(f"must  kept share of peak over [{2 * K + 1}, {3 * K}], log M - M (>= 0)", f"{w}.retained_margin_min", ">=", 0.0)
    row("  control: attribute mixture", f"{cw}.retained_margin_min", ">=", 0.0)
    row("retired logm_more_stable: M's drop - log M's (>= 0)", "paper_set.window.drop_margin_min", ">=", 0.0)
    row("  the same, sampled spreads only", f"{w}.drop_margin_min", ">=", 0.0)
    for arm, base in (("the model", "paper_set.window.settings"), ("mixture", "control.paper_set.window.settings")):
        for name in p.spreads:
            for key in ("logM_mean", "M_mean", "logM_best", "M_best", "logM_retained", "M_retained"):
                row(f"{arm}, sampled {name}: {key}", f"{base}.sampled_{name}.{key}", ">=", 0.0, "{:.3f}")
    print("\nother sampled-corpus checks (per seed, judged)")
    row("(ii) log M min over [K+1, 2K], narrow (>= 0.9)", "saturation.logM_min_K1_2K", ">=", 0.9, "{:.4f}")
    row("per-k log M - M, T sets, sampled, every k >= K+1 (>= 0)", "paper_set.logm_minus_m.sampled.min_k_ge_K1", ">=", 0.0)
    row("(iv) corpus removal after/before min (>= 0.5)", "paper_set.removal_sampled.ratio_min", ">=", 0.5)
    row("(iv) corpus removal after x V min (>= 10)", "paper_set.removal_sampled.after_over_chance_min", ">=", 10.0, "{:.1f}")
    row("(iv) flips, after/before min (>= 0.9)", "removal.ratio_min", ">=", 0.9)
    print(f"\nprocess time: shared part {t_shared:.1f} s (once), seeds {sum(t_seed.values()):.1f} s "
          f"({sum(t_seed.values()) / len(seeds):.1f} s a seed); total {time.process_time() - c0:.1f} s "
          "(the train stage adds real text and the write; evaluate its plots)")


if __name__ == "__main__":
    main()
