"""benchmarks/mtl_kd/paper_gpu.py (the paper-profile check the lead runs once on a GPU) runs here
on CPU at toy sizes, writes its JSON with every must check's figure, and imports nothing the GPU
machine lacks (no stage.py, MLflow, DVC or pydantic)."""
from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GPU_HOST_HAS = {"argparse", "json", "os", "sys", "time", "pathlib", "types", "math", "multiprocessing",
                "numpy", "torch", "yaml", "pyvrp", "__future__", "stages"}


def top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:           # module level only: function-local imports run on call
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add("." if node.level else node.module)
    return names


def test_imports_only_what_the_gpu_machine_has():
    script = top_level_imports(ROOT / "benchmarks/mtl_kd/paper_gpu.py")
    assert "stages.mtl_kd" in script and not any(n.startswith("stages.common") for n in script)
    for rel in ("benchmarks/mtl_kd/paper_gpu.py", "stages/mtl_kd/vrp.py", "stages/mtl_kd/models.py",
                "stages/mtl_kd/baseline.py", "stages/mtl_kd/__init__.py", "stages/__init__.py"):
        roots = {n.split(".")[0] for n in top_level_imports(ROOT / rel) if n != "."}
        assert roots <= GPU_HOST_HAS, (rel, roots - GPU_HOST_HAS)


def test_tiny_run_on_cpu_writes_every_check(tmp_path):
    from benchmarks.mtl_kd.paper_gpu import main

    out = tmp_path / "gpu.json"
    res = main(["--tiny", "--device", "cpu", "--out", str(out)])
    assert json.loads(out.read_text())["checks"] == json.loads(json.dumps(res["checks"]))
    assert set(res["per_variant"]) == {"cvrp", "ovrp", "vrptw", "ovrptw"}
    assert res["checks"]["solutions_feasible"]["figure"] == 0          # the masks make every solution feasible
    assert res["hgs_infeasible"] == 0
    assert all(res["train"][k]["steps"] == 3 for k in res["train"])
    assert res["per_variant"]["cvrp"]["student_r3c"] <= res["per_variant"]["cvrp"]["student"] + 1e-9
