"""autoopt M2: the two speed choices of m2-evaluate, each against the plain alternative, in one run.

1. Sandbox batching: ``run_batch`` with one worker process serving all scripts, against a fresh
   worker process (a Python start + Pyomo import) per script -- the same code path, one call of
   run_batch per script. Same "compare" task as the stage (reference = the generator's script).
2. Parser: the translator's grammar under lark's LALR(1) parser (what m2/rules.py uses) against lark's
   Earley parser on the same grammar and the same inputs (both must give the same scripts).

Prints both times, their ratio and whether the results agree.

    python benchmarks/autoopt/m2_sandbox.py [--scripts 30] [--latex 300] [--repeats 3]

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.bench import best_of  # noqa: E402

GEN = {"type_weights": {"single": 0.4, "multi": 0.2, "bilevel": 0.2, "stochastic": 0.2},
       "complexity_rate": 0.35, "n_choices": [10, 20, 50, 100]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scripts", type=int, default=30)
    ap.add_argument("--latex", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.scripts, a.latex, a.repeats = 2, 5, 1
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from lark import Lark

    from stages.autoopt.data import grammar as g
    from stages.autoopt.m2 import rules as R
    from stages.autoopt.m2.sandbox import run_batch

    problems = [g.generate(s, **GEN) for s in range(max(a.scripts, a.latex))]
    scripts = [R.translate(p.latex()) for p in problems[:a.scripts]]
    tasks = [{"kind": "compare", "reference": p.pyomo(), "points": 5, "seed": k}
             for k, p in enumerate(problems[:a.scripts])]
    limits = {"time_limit_s": 30, "memory_mb": 2048}

    t_batch, batched = best_of(lambda: run_batch(scripts, tasks, **limits), a.repeats)
    t_single, single = best_of(lambda: [run_batch([s], [t], **limits)[0] for s, t in zip(scripts, tasks)], 1)
    same = [r.payload for r in batched] == [r.payload for r in single]
    print(f"sandbox, {a.scripts} scripts: one worker for all {t_batch:.2f}s   a process per script "
          f"{t_single:.2f}s   ratio per-script/batched = {t_single / t_batch:.1f}   same payloads: {same}")

    texts = [R.prepare_latex(p.latex()) for p in problems[:a.latex]]
    lalr = R.parser()
    earley = Lark(R.GRAMMAR, parser="earley", lexer="basic", ambiguity="resolve")

    def run(parser):
        b = R.Builder(())
        out = []
        for text in texts:
            tree = parser.parse(text)
            xi = [t for t in tree.children if getattr(t, "data", None) == "xi_dist"]
            b.xi_values = tuple(b.signed(s) for s in xi[0].children) if xi else ()
            out.append(R.emit(R.formulation_of(tree, b)))
        return out
    t_lalr, out_lalr = best_of(lambda: run(lalr), a.repeats)
    t_earley, out_earley = best_of(lambda: run(earley), 1)
    print(f"parser, {a.latex} formulations: LALR {t_lalr:.2f}s   Earley {t_earley:.2f}s   "
          f"ratio Earley/LALR = {t_earley / t_lalr:.1f}   same scripts: {out_lalr == out_earley}")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f}s in all)")
