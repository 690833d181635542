"""What skipping MLflow's requirement scan saves when a stage saves its model.

    python benchmarks/save_pyfunc.py [--repeats 3]

Each measurement is a fresh process (as a stage is) that saves one small pyfunc model, models
from code, either with ``mlflow.pyfunc.save_model`` as it comes (which checks the environment
against the model's pip requirements, mapping every installed distribution to its modules) or
with ``stages.common.mlmodel.save_pyfunc`` (which skips that check). Prints the CPU seconds of the
save alone (imports excluded) and their ratio; the saved folders are compared in
tests/common/test_mlmodel.py.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from _bench import env  # noqa: E402

CHILD = r'''
import sys, tempfile, time
from pathlib import Path
import mlflow.pyfunc
from stages.common.mlmodel import pinned, save_pyfunc
d = Path(tempfile.mkdtemp())
code, cfg = d / "pyfunc.py", d / "config.json"
code.write_text("import mlflow.pyfunc\nfrom mlflow.models import set_model\n"
                "class M(mlflow.pyfunc.PythonModel):\n"
                "    def predict(self, context, model_input, params=None):\n        return model_input\n"
                "set_model(M())\n")
cfg.write_text("{}")
t0 = time.process_time()
if sys.argv[1] == "plain":
    mlflow.pyfunc.save_model(str(d / "m"), python_model=str(code), artifacts={"config": str(cfg)},
                             pip_requirements=pinned("torch", "numpy"))
else:
    save_pyfunc(d / "m", code, {"config": cfg})
print(time.process_time() - t0)
'''


def one(mode: str) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, mode], cwd=REPO, env=env(), capture_output=True,
                         text=True, check=True).stdout
    return float(out.split()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    plain, ours = [], []
    for _ in range(a.repeats):                       # interleaved, so drift in machine speed hits both
        plain.append(one("plain"))
        ours.append(one("ours"))
    m = statistics.median
    print(f"mlflow.pyfunc.save_model (with the requirement scan): {m(plain):.3f} s CPU (median of {a.repeats})")
    print(f"stages.common.mlmodel.save_pyfunc (scan skipped):     {m(ours):.3f} s CPU")
    print(f"saved per model-saving stage: {m(plain) - m(ours):.3f} s CPU; ratio {m(plain) / max(m(ours), 1e-3):.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
