"""bitmark: our Adam (stages/bitmark/ar.Adam) against torch.optim.Adam, each in a fresh process
(the import of torch._dynamo that a torch optimiser pulls in is the point), the same MADE and
batches: CPU seconds of constructing the optimiser and 300 steps, and whether the final weights
are bit-identical.

    python -m benchmarks.bitmark_adam
"""
from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import hashlib, json, sys, time
import numpy as np, torch
torch.set_num_threads(1)
from stages.bitmark import ar
which = sys.argv[1]
m = ar.build(256, 1, 0)
x = (torch.rand(1437, 256, generator=torch.Generator().manual_seed(0)) < 0.3).float()
y = ar.one_hot(np.arange(1437) % 10)
t0 = time.process_time()
opt = ar.Adam(m.parameters(), lr=2e-3, weight_decay=1e-5) if which == "ours" else \
    torch.optim.Adam(m.parameters(), lr=2e-3, weight_decay=1e-5)
g = torch.Generator().manual_seed(1)
for _ in range(300):
    idx = torch.randint(0, 1437, (128,), generator=g)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(m(x[idx], y[idx]), x[idx])
    opt.zero_grad(); loss.backward(); opt.step()
cpu = time.process_time() - t0
h = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in m.parameters())).hexdigest()
print(json.dumps({"cpu_s": cpu, "weights": h}))
"""


def run(which: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, which], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ours, theirs = run("ours"), run("torch")
    print("300 Adam steps of the default MADE, optimiser construction included (CPU s, one thread):")
    print(f"  ours {ours['cpu_s']:.2f}   torch.optim.Adam {theirs['cpu_s']:.2f}   ratio torch/ours "
          f"{theirs['cpu_s'] / ours['cpu_s']:.2f}x")
    print(f"  final weights bit-identical: {ours['weights'] == theirs['weights']}")


if __name__ == "__main__":
    main()
