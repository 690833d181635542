"""The shared Adam (``stages/common/optim.Adam``, used by hephaestus_qosd and bitmark) against
``torch.optim.Adam``.

    python benchmarks/common/adam.py [--steps 600] [--weight-decay 0]

It re-implements Adam only to avoid the import ``torch.optim`` makes on its first optimiser
(``torch._dynamo``). Each side runs in a fresh process: import torch, build the same small MLP,
take ``--steps`` Adam steps on the same data. Printed: each side's CPU time, their ratio, the
import cost alone, and whether the final weights are bit-identical. ``--smoke`` runs it at tiny sizes in
seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = r"""
import hashlib, json, sys, time
t0 = time.process_time()
import torch
torch.set_num_threads(1)
which, steps, wd = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
x, y = torch.randn(256, 16), torch.randn(256, 1)
t1 = time.process_time()
if which == "ours":
    from stages.common.optim import Adam
    opt = Adam(net.parameters(), lr=0.01, weight_decay=wd)
else:
    opt = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=wd)
for _ in range(steps):
    opt.zero_grad()
    ((net(x) - y) ** 2).mean().backward()
    opt.step()
t2 = time.process_time()
digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in net.parameters())).hexdigest()
print(json.dumps({"total_s": t2 - t0, "optimiser_and_steps_s": t2 - t1, "weights": digest}))
"""


def run(which: str, steps: int, wd: float) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, which, str(steps), str(wd)], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args(argv)
    if a.smoke:
        a.steps = 5
    ours, ref = run("ours", a.steps, a.weight_decay), run("torch", a.steps, a.weight_decay)
    print(f"{a.steps} Adam steps, one thread, fresh process each (CPU seconds):")
    print(f"  common.optim.Adam: optimiser + steps {ours['optimiser_and_steps_s']:.2f} s, process {ours['total_s']:.2f} s")
    print(f"  torch.optim.Adam : optimiser + steps {ref['optimiser_and_steps_s']:.2f} s, process {ref['total_s']:.2f} s")
    print(f"  ratio torch / ours, optimiser + steps: {ref['optimiser_and_steps_s'] / ours['optimiser_and_steps_s']:.2f}x")
    print(f"  final weights bit-identical: {ours['weights'] == ref['weights']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
