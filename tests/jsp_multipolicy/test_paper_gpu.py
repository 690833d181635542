"""benchmarks/jsp_multipolicy/paper_gpu.py, the script for a lent GPU machine, runs here on CPU
with --tiny in a process where the pipeline's stack (mlflow, pydantic, dvc, prefect, highspy,
ortools, the stage wrapper and tracking) cannot be imported, as on that machine, and writes the
figures it prints. It may use stages.common.stats (numpy and scipy, both on that machine's image)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "jsp_multipolicy" / "paper_gpu.py"
BLOCK = ("mlflow", "pydantic", "dvc", "prefect", "highspy", "ortools", "stages.common.runtime.stage",
         "stages.common.runtime.tracking", "stages.common.runtime.params", "stages.common.device")


def test_paper_gpu_script_runs_tiny_on_cpu_without_the_stack(tmp_path):
    out = tmp_path / "out.json"
    code = ("import runpy, sys\n"
            f"for m in {BLOCK!r}: sys.modules[m] = None\n"
            f"sys.argv = ['x', '--tiny', '--device', 'cpu', '--out', {str(out)!r}]\n"
            f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "must_multi_beats_l2d_jssp10 (one seed" in proc.stdout
    r = json.loads(out.read_text())
    assert set(r["methods"]) == {"single", "multi", "l2d"} and r["methods"]["multi"]["steps"] == 3
    assert r["methods"]["l2d"]["steps"] == 3 and r["seed"] >= 1000
    assert set(r["sets"]) == {"g10", "g15", "flow"} and r["sets"]["g10"]["multi_minus_single"]["n"] == 3
    assert "multi_minus_l2d" in r["sets"]["flow"] and "l2d" not in r["sets"]["g15"]["gap_mean"]
    for name in ("must_multi_beats_l2d_jssp10", "must_multi_beats_l2d_flow10", "must_multi_beats_single_10x10"):
        must = r[name]
        assert must["low"] <= must["mean"] <= must["high"] and must["below_zero"] == (must["high"] < 0)


def test_paper_gpu_script_refuses_a_verdict_seed():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--device", "cpu", "--seed", "0", "--out", "x.json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "seeds >= 1000 only" in proc.stderr
