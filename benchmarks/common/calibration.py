"""What every calibration and seeds benchmark of a study shares: its command line (calibration
seeds, the profile, a --smoke size) and the refusal of verdict seeds (docs/VERDICTS.md, section 1:
settings are chosen on calibration seeds >= 1000; the verdict seeds below are never used here)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

CALIBRATION_SEEDS = "1000,1001,1002,1003,1004"
SMOKE_SEEDS = "1000,1001"


def seed_parser(doc: str | None, sets: bool = False) -> argparse.ArgumentParser:
    """A parser with ``--seeds`` (calibration seeds, comma-separated), ``--profile`` and ``--smoke``
    (the smoke profile and two seeds, unless given explicitly), and with ``sets`` a repeatable
    ``--set key=JSON`` for :func:`study_params`; add the script's own options."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default=CALIBRATION_SEEDS, help="calibration seeds (>= 1000), comma-separated")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    if sets:
        ap.add_argument("--set", action="append", default=[], help="dotted key=JSON value under the profile")
    return ap


def parse_seeds(ap: argparse.ArgumentParser, argv: list[str] | None = None,
                **smoke: object) -> tuple[argparse.Namespace, list[int]]:
    """(the arguments, the seeds): ``--smoke`` switches the defaults to the smoke profile, two
    seeds and the script's own ``smoke`` defaults; a verdict seed (< 1000) is refused."""
    from stages.common.runtime.params import CALIBRATION_FROM

    a = ap.parse_args(argv)
    if a.smoke:                       # options given explicitly still win
        ap.set_defaults(seeds=SMOKE_SEEDS, profile="smoke", **smoke)
        a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    if min(seeds) < CALIBRATION_FROM:
        raise SystemExit(f"benchmarks use calibration seeds >= {CALIBRATION_FROM} only "
                         f"(the verdict seeds are below {CALIBRATION_FROM})")
    return a, seeds


def set_dotted(data: dict, dotted: str) -> None:
    """Apply ``key.sub=JSON`` (a ``--set`` option) to a params tree in place."""
    key, _, raw = dotted.partition("=")
    *path, last = key.split(".")
    node = data
    for k in path:
        node = node[k]
    node[last] = json.loads(raw)


def study_params(study: str, model, a: argparse.Namespace):
    """``study``'s params of the profile ``a.profile``, with every ``--set`` of ``a`` applied,
    validated by ``model``."""
    from stages.common.runtime.params import load_study, read_params

    data = read_params(studies=[study])
    for dotted in getattr(a, "set", []):
        set_dotted(data[study][a.profile], dotted)
    return load_study(study, model, data, profile=a.profile)[1]


def cpu_self() -> float:
    """CPU seconds (user + system) this process has used so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_children() -> float:
    """CPU seconds (user + system) of this process's children that have ended and been waited for
    (a seeds benchmark's one-process-per-seed runs)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# --- a seeds benchmark: one process per seed against every seed in one process ---------------------------

REPO = Path(__file__).resolve().parents[2]


def add_one_seed_args(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the hidden ``--one SEED --out FILE`` of a seeds benchmark's child process (one seed, its
    figures written to FILE by :func:`write_one_seed`)."""
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    return ap


def forwarded(a: argparse.Namespace) -> list[str]:
    """The options a child must get to run the parent's settings: ``--profile`` and every ``--set``."""
    return ["--profile", a.profile, *[x for s in getattr(a, "set", []) for x in ("--set", s)]]


def _arrays(figures: object) -> bool:
    """Whether ``figures`` is a non-empty dict of numpy arrays (saved as .npz, compared bit for bit)."""
    import numpy as np

    return isinstance(figures, dict) and bool(figures) and all(isinstance(v, np.ndarray) for v in figures.values())


def write_one_seed(a: argparse.Namespace, figures: object) -> None:
    """The child's side: write seed ``a.one``'s figures to ``a.out``, as .npz when they are a dict of
    numpy arrays, else as JSON. A verdict seed is refused (the parent only passes calibration seeds)."""
    from stages.common.runtime.params import CALIBRATION_FROM

    if a.one < CALIBRATION_FROM:
        raise SystemExit(f"benchmarks use calibration seeds >= {CALIBRATION_FROM} only")
    if _arrays(figures):
        import numpy as np

        with open(a.out, "wb") as f:
            np.savez(f, **figures)
    else:
        with open(a.out, "w") as f:
            json.dump(figures, f, sort_keys=True)


def _read_one_seed(path: str) -> object:
    import numpy as np

    with open(path, "rb") as f:
        if f.read(4) == b"PK\x03\x04":                 # a zip: np.savez's arrays
            with np.load(path) as z:
                return {k: z[k] for k in z.files}
    with open(path) as f:
        return json.load(f)


def same_figures(together: object, apart: object) -> bool:
    """Whether one seed's figures from this process equal those its own process wrote: every array
    equal bit for bit (the same names), or the same JSON after a round trip."""
    import numpy as np

    if _arrays(together):
        return (isinstance(apart, dict) and set(apart) == set(together)
                and all(np.array_equal(together[k], apart[k]) for k in together))
    return json.loads(json.dumps(together, sort_keys=True)) == apart


def seeds_main(a: argparse.Namespace, seeds: list[int], run_one, script: str, **kw) -> dict | None:
    """Both sides of a seeds benchmark's ``main``: in a child (``--one SEED``), write that seed's
    figures (:func:`write_one_seed`) and return None; else time the seeds one process per seed
    against all in this one (:func:`one_process_vs_one_per_seed`, children run as ``script`` with
    the parent's options) and return its {seed: figures}."""
    import sys

    if a.one is not None:
        write_one_seed(a, run_one(a.one))
        return None
    return one_process_vs_one_per_seed(seeds, run_one, [sys.executable, script, *forwarded(a)], **kw)


def one_process_vs_one_per_seed(seeds: list[int], run_one, child_cmd: list[str], *, label: str,
                                what: str = "the stages' compute", figures: str = "figures",
                                note: str = "") -> dict:
    """Time ``seeds`` each in its own child process (``child_cmd`` plus ``--one SEED --out FILE``:
    the script itself, which answers with :func:`write_one_seed`), then all in this process one
    after another (``stages.common.seeds.run_seeds(seeds, run_one)``, as the stages run them);
    print wall and CPU seconds of both ways and their ratio, check that every seed's ``figures``
    are the same both ways (:func:`same_figures`) and raise SystemExit where one differs: a seed's
    figures would then depend on more than its seed. Returns {seed: figures} of this process.

    ``label`` opens the summary (the profile and options), ``what`` names the compute and
    ``note`` is added after the one-process timing (say, what this process had imported before)."""
    import subprocess
    import tempfile
    import time

    from stages.common.seeds import run_seeds

    with tempfile.TemporaryDirectory() as tmp:
        w0, c0 = time.perf_counter(), cpu_children()
        for s in seeds:
            subprocess.run([*child_cmd, "--one", str(s), "--out", f"{tmp}/{s}"], cwd=REPO, check=True,
                           stdout=subprocess.DEVNULL)
            print(f"  own process: seed {s} done ({time.perf_counter() - w0:.1f}s)", flush=True)
        wall_per, cpu_per = time.perf_counter() - w0, cpu_children() - c0
        apart = {s: _read_one_seed(f"{tmp}/{s}") for s in seeds}
    w0, c0 = time.perf_counter(), cpu_self()
    together = run_seeds(seeds, run_one, what="one process: seed")
    wall_one, cpu_one = time.perf_counter() - w0, cpu_self() - c0
    same = all(same_figures(together[s], apart[s]) for s in seeds)
    print(f"{label}, calibration seeds {seeds}: {what}")
    print(f"  one process per seed: {wall_per:.1f} s wall, {cpu_per:.1f} s CPU")
    print(f"  all seeds in one process (the stages' way): {wall_one:.1f} s wall, {cpu_one:.1f} s CPU"
          + (f" ({note})" if note else ""))
    print(f"  ratio one process / one per seed: wall {wall_one / max(wall_per, 1e-9):.2f}, "
          f"CPU {cpu_one / max(cpu_per, 1e-9):.2f}")
    print(f"  every seed's {figures} the same both ways: {same}", flush=True)
    if not same:
        raise SystemExit(f"a seed's {figures} differ between one process per seed and one process: "
                         "they do not depend on its seed alone")
    return together
