"""w2v_quartic across seeds: the downstream comparison of runs made with different `common.seed`.

    python benchmarks/w2v_quartic/seeds.py 0=reports/w2v_quartic/metrics.json 1=/tmp/seed1/reports/w2v_quartic/metrics.json ...

Each argument is SEED=PATH of a `reports/w2v_quartic/metrics.json` written by the study's
evaluate stage (default profile; a seed's run: a scratch copy of the repository with
`common.seed` set, then `dvc repro stages/w2v_quartic/dvc.yaml`). Prints, per seed, the
checked score on `overlap_rich` (the omniscient quartic model, gensim's mean and spread, the
tolerance, gap / tolerance and the must's verdict) and the quartic model with word2vec's pair
weights; then the mean gap over the seeds with a 95% Student-t interval, and how many seeds
pass. Thresholds are read from claims.yaml.
``--smoke`` runs it at tiny sizes in seconds (what CI runs): no run's metrics needed, it reads two
made-up metrics.json (built with the evaluate stage's score functions) from a temp folder.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def t_interval(x) -> tuple[float, float, float]:
    import numpy as np
    from scipy.stats import t

    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    if len(x) < 2:
        return m, float("nan"), float("nan")
    half = float(t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return m, m - half, m + half


def stand_in_metrics(folder: Path, claims: dict) -> list[str]:
    """Two made-up metrics.json in ``folder`` (seeds 0 and 1), shaped as the evaluate stage writes
    them (its ``score_all`` and ``compare_to_gensim``, every claim's metric present): the smoke's
    stand-in for real runs. Returns their SEED=PATH arguments."""
    from stages.common.runtime.params import load_study
    from stages.w2v_quartic.evaluate import compare_to_gensim, score_all
    from stages.w2v_quartic.params import W2VParams

    ep = load_study("w2v_quartic", W2VParams, profile="smoke")[1].evaluate
    runs = []
    for seed, q in ((0, 0.70), (1, 0.66)):
        s = score_all({"quartic": [q], "sgns": [q], "closed_form": [q], "quartic_w2v": [q + 0.15],
                       "sgns_w2v": [q + 0.15], "gensim": [0.73, 0.74]}, lambda x: x)
        m = {"downstream_rich": {"score": compare_to_gensim(s, ep),
                                 "score_word2vec_weights": compare_to_gensim(s, ep, "quartic_w2v", "sgns_w2v")}}
        for c in claims.values():                       # every claim's metric, made up ...
            *parents, leaf = c.metric.split(".")
            cur = m
            for part in parents:
                cur = cur.setdefault(part, {})
            cur[leaf] = 0.5
        m["claims"].update(rich_gap_over_tolerance=m["downstream_rich"]["score"]["gap_over_tolerance"],
                           rich_w2v_gap_over_tolerance=m["downstream_rich"]["score_word2vec_weights"][
                               "gap_over_tolerance"])   # ... but these two as the stage derives them
        path = folder / f"seed{seed}" / "metrics.json"
        path.parent.mkdir()
        path.write_text(json.dumps(m))
        runs.append(f"{seed}={path}")
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", help="SEED=PATH to a metrics.json")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if not a.runs and not a.smoke:
        ap.error("the following arguments are required: runs")

    from stages.common.claims import compare, load_claims, lookup

    claims = {c.id: c for c in load_claims(REPO / "stages/w2v_quartic/claims.yaml").claims}
    if a.smoke:                    # the same code path on made-up runs (figures meaningless)
        tmp = tempfile.TemporaryDirectory(prefix="w2v_seeds-")
        a.runs = stand_in_metrics(Path(tmp.name), claims)
        print("smoke: no runs' metrics used; two made-up metrics.json in a temp folder", flush=True)
    rows = []
    for item in a.runs:
        seed, _, path = item.partition("=")
        if not path:
            sys.exit(f"expected SEED=PATH, got {item!r}")
        m = json.loads(Path(path).read_text())
        s, w = m["downstream_rich"]["score"], m["downstream_rich"].get("score_word2vec_weights")
        verdicts = {cid: compare(lookup(m, c.metric), c.op, c.threshold) for cid, c in claims.items()
                    if lookup(m, c.metric) is not None}
        rows.append((int(seed), s, w, verdicts))
    rows.sort(key=lambda r: r[0])

    print("overlap_rich, precision@10: the omniscient quartic model (the must) and the quartic model "
          "with word2vec's pair weights")
    print(f"{'seed':>4} {'quartic':>8} {'gensim':>8} {'± std':>7} {'tol':>6} {'gap':>8} {'gap/tol':>8} "
          f"{'must':>6} | {'q w2v':>7} {'sgns w2v':>8} {'gap':>8} {'gap/tol':>8}")
    for seed, s, w, v in rows:
        line = (f"{seed:>4} {s['quartic']:>8.4f} {s['gensim_mean']:>8.4f} {s['gensim_std']:>7.4f} "
                f"{s['tolerance']:>6.4f} {s['quartic_minus_gensim']:>+8.4f} {s['gap_over_tolerance']:>8.3f} "
                f"{'holds' if v['rich_downstream_matches_gensim'] else 'FAILS':>6}")
        if w:
            line += (f" | {w['quartic']:>7.4f} {w['sgns']:>8.4f} {w['quartic_minus_gensim']:>+8.4f} "
                     f"{w['gap_over_tolerance']:>8.3f}")
        print(line)
    seeds = [r[0] for r in rows]
    for label, key, src in (("omniscient quartic - gensim", "quartic_minus_gensim", 1),
                            ("word2vec-weighted quartic - gensim", "quartic_minus_gensim", 2)):
        vals = [r[src][key] for r in rows if r[src]]
        if vals:
            mean, lo, hi = t_interval(vals)
            print(f"{label}: mean {mean:+.4f}, 95% t-interval [{lo:+.4f}, {hi:+.4f}] over seeds {seeds}; "
                  f"range [{min(vals):+.4f}, {max(vals):+.4f}]")
    print("must claims per seed:")
    for cid, c in claims.items():
        if c.level != "must":
            continue
        ok = [r[3].get(cid) for r in rows]
        print(f"  {cid}: holds on {sum(bool(x) for x in ok)} of {len(ok)} seeds "
              f"({', '.join(f'{s}: {x}' for s, x in zip(seeds, ok))})")


if __name__ == "__main__":
    main()
