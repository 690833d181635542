"""What MLflow's requirement scan costs a stage that saves its model.

    python benchmarks/common/save_pyfunc.py [--repeats 3]

Each measurement is a fresh process (as a stage is) that saves one small pyfunc model, models
from code, with ``stages.common.mlmodel.save_pyfunc`` (MLflow's public ``save_model``, which
checks the environment against the model's pip requirements by mapping every installed
distribution to its modules, once per process), then saves a second one. Prints the CPU seconds of
each save (imports excluded): the first pays the scan, the second shows what a save costs without
it. The saved folder equals a plain ``save_model``'s (tests/common/test_mlmodel.py). ``--smoke``: one
repeat (what CI runs).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.bench import env  # noqa: E402

CHILD = r'''
import sys, tempfile, time
from pathlib import Path
import mlflow.pyfunc
import numpy as np
from stages.common.mlmodel import save_pyfunc
d = Path(tempfile.mkdtemp())
code, cfg = d / "pyfunc.py", d / "config.json"
code.write_text("import mlflow.pyfunc\nfrom mlflow.models import set_model\n"
                "class M(mlflow.pyfunc.PythonModel):\n"
                "    def predict(self, context, model_input, params=None):\n        return model_input\n"
                "set_model(M())\n")
cfg.write_text("{}")
t0 = time.process_time()
save_pyfunc(d / "first", code, {"config": cfg}, input_example=np.zeros((2, 3)))
t1 = time.process_time()
save_pyfunc(d / "second", code, {"config": cfg}, input_example=np.zeros((2, 3)))
print(t1 - t0, time.process_time() - t1)
'''


def one() -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, env=env(), capture_output=True,
                         text=True, check=True).stdout
    first, second = out.split()[-2:]
    return float(first), float(second)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args(argv)
    if a.smoke:
        a.repeats = 1
    runs = [one() for _ in range(a.repeats)]
    m = statistics.median
    first, second = m(r[0] for r in runs), m(r[1] for r in runs)
    print(f"first save in a process (pays the requirement scan): {first:.3f} s CPU (median of {a.repeats})")
    print(f"second save in the same process:                    {second:.3f} s CPU")
    print(f"the scan, once per model-saving stage: {first - second:.3f} s CPU; ratio {first / max(second, 1e-3):.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
