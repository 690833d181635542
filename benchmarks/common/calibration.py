"""What every calibration and seeds benchmark of a study shares: its command line (calibration
seeds, the profile, a --smoke size) and the refusal of verdict seeds (docs/VERDICTS.md, section 1:
settings are chosen on calibration seeds >= 1000; the verdict seeds below are never used here)."""
from __future__ import annotations

import argparse
import json

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
