"""Solve one optimisation problem from an image of its formulation: image -> M1 -> M2 -> M3.

    claimbench run autoopt solve IMAGE [--beam K] [--budget N] [--seed S] [--time-limit T]
    claimbench run autoopt solve --latex "\\min_{x} \\quad ..."      (skip M1)

Prints the LaTeX M1 reads (greedy, or beam search of width K with the page design), the Pyomo script the rule-based
M2 writes, and the solution BOBD (M3) finds; the script is built and solved in the sandbox, never
in this process. Needs the trained M1 (``dvc repro stages/autoopt/dvc.yaml:autoopt-m1-train``) unless ``--latex`` is given.
Exit status: 0 solved, 1 the chain stopped (the message says where), 2 bad input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..paths import MODEL_DIR


def read_image(path: Path):
    """One image file as a grey uint8 array (white paper, dark ink)."""
    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(path).convert("L"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="claimbench run autoopt solve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("image", nargs="?", type=Path, help="PNG/JPEG of a formulation")
    parser.add_argument("--latex", help="start from this LaTeX instead of an image (skips M1)")
    parser.add_argument("--beam", type=int, default=1, help="beam width of M1's decoding (1 = greedy)")
    parser.add_argument("--budget", type=int, default=20000, help="BOBD's function-evaluation budget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=120.0, help="seconds for build + solve")
    parser.add_argument("--model", type=Path, default=Path(MODEL_DIR) / "main.pt", help="M1 checkpoint")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)

    if (args.image is None) == (args.latex is None):
        print("error: give an IMAGE or --latex (one of them)", file=sys.stderr)
        return 2
    if args.beam < 1 or args.budget < 10 or args.time_limit <= 0:
        print("error: --beam >= 1, --budget >= 10 and --time-limit > 0", file=sys.stderr)
        return 2
    if args.latex is None:
        if not args.image.is_file():
            print(f"error: no image file {args.image}", file=sys.stderr)
            return 2
        if not args.model.is_file():
            print(f"error: no M1 checkpoint at {args.model}; run `dvc repro stages/autoopt/dvc.yaml:autoopt-m1-train` first",
                  file=sys.stderr)
            return 2
        from ..m1.reader import load_reader

        reader = load_reader(args.model, "cpu")
        if args.beam > 1 and reader.design != "page":
            print("error: --beam is for the page design; this M1 reads lines (greedy CTC)", file=sys.stderr)
            return 2
        try:
            img = read_image(args.image)
        except OSError as err:
            print(f"error: cannot read {args.image} as an image: {err}", file=sys.stderr)
            return 2
        if args.beam == 1:
            latex = reader.read([img])[0]
        else:
            import torch

            from ..data.render import to_input

            model, vocab = reader.model, reader.vocab
            x = torch.from_numpy(to_input(img, model.cfg.height, model.cfg.width)[None, None])
            latex = vocab.decode(model.beam(x, vocab.bos, vocab.eos, model.cfg.max_len, args.beam))
        print(f"M1 (image -> LaTeX, {'greedy' if args.beam == 1 else f'beam {args.beam}'}):\n  {latex}\n")
    else:
        latex = args.latex

    from .chain import solve_scripts, translate_all

    (script, reason), = translate_all([latex])
    if script is None:
        print(f"M2 could not translate this LaTeX: {reason}", file=sys.stderr)
        return 1
    print("M2 (LaTeX -> Pyomo, rule-based):\n" + script)
    out, = solve_scripts([script], budget=args.budget, seed=args.seed, time_limit_s=args.time_limit,
                         memory_mb=4096, desc=None)
    if not out.solved:
        print(f"M3 stopped: {out.stage}: {out.error}", file=sys.stderr)
        return 1
    sol = out.solution
    print("M3 (BOBD) solution:")
    print(f"  objective {sol.get('objective')}, feasible {sol.get('feasible')} "
          f"(max violation {sol.get('max_violation')}), {sol.get('evals')} function evaluations, "
          f"{sol.get('seconds', 0.0):.2f} s")
    for name, values in (sol.get("x") or {}).items():
        shown = ", ".join(f"{v:.4g}" for v in list(values)[:20])
        more = f", ... ({len(values)} in all)" if len(values) > 20 else ""
        print(f"  {name} = [{shown}{more}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
