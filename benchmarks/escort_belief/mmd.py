"""escort_belief: our MMD against one built from scikit-learn's RBF kernel, in one run.

    python benchmarks/escort_belief/mmd.py [--n 100] [--m 1000] [--dims 2,20] [--repeats 5] [--smoke]

``--smoke`` runs it at tiny sizes in seconds (what CI runs): 20 particles, 50 exact samples, one repeat.

The study writes its own (weighted, multi-bandwidth) MMD (stages/escort_belief/metrics.py); no
installed library computes an MMD, but scikit-learn computes the RBF kernel matrices. Per
dimension this prints both times (best of --repeats, three bandwidths, weighted particles vs
exact samples as in evaluate), the ratio sklearn / ours and the largest absolute difference.
The sliced Wasserstein distance is POT's (not re-implemented), so it has no benchmark.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks.bench import best_of  # noqa: E402


def sklearn_mmd(X, Y, sigmas, a):
    import numpy as np
    from sklearn.metrics.pairwise import rbf_kernel

    b = np.full(len(Y), 1.0 / len(Y))
    out = []
    for s in sigmas:
        g = 1.0 / (2.0 * s ** 2)
        v = a @ rbf_kernel(X, X, gamma=g) @ a + b @ rbf_kernel(Y, Y, gamma=g) @ b - 2 * a @ rbf_kernel(X, Y, gamma=g) @ b
        out.append(np.sqrt(max(v, 0.0)))
    return np.array(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="particles")
    ap.add_argument("--m", type=int, default=1000, help="exact samples")
    ap.add_argument("--dims", default="2,20")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.n, a.m, a.repeats = 20, 50, 1
    import numpy as np

    from stages.escort_belief.metrics import median_distance, mmd

    rng = np.random.default_rng(1000)             # a calibration seed: benchmarks never use a verdict seed
    for d in (int(x) for x in a.dims.split(",")):
        X, Y = rng.standard_normal((a.n, d)), 0.5 + rng.standard_normal((a.m, d))
        w = rng.random(a.n)
        w /= w.sum()
        sig = np.array([0.5, 1.0, 2.0]) * median_distance(Y)
        ours = mmd(X, Y, sig, w)
        ref = sklearn_mmd(X, Y, sig, w)
        t_ours = best_of(lambda: mmd(X, Y, sig, w), a.repeats)[0]
        t_ref = best_of(lambda: sklearn_mmd(X, Y, sig, w), a.repeats)[0]
        print(f"d={d}: ours {t_ours * 1e3:.2f} ms, sklearn-kernel MMD {t_ref * 1e3:.2f} ms, "
              f"ratio sklearn/ours {t_ref / t_ours:.2f}, max |diff| {np.abs(ours - ref).max():.2e}", flush=True)


if __name__ == "__main__":
    main()
