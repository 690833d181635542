"""The ``params`` stage: every study's params, all three profiles, validated before any stage runs.

    python -m claimbench.params_check

DVC removes a stage's outs before it runs the stage's command, so a stage that rejects its own
params (exit 2, naming the key) has already lost its outputs by then. This stage runs first:
every stage of the DAG lies downstream of it (the first stage of each study names its output
as a dep), and it depends on every params file and every params model. When one of them
changes, it validates them all; on a bad value it exits 2 with the errors and writes nothing,
so ``dvc repro`` stops before any stage's outs are touched.

Its output, :data:`MARKER`, holds the same text whenever the params are valid. Valid edits
therefore re-run this stage (about a second) and nothing downstream because of it: the stages
whose own params changed re-run through their ``params:`` entries, as before. The marker is
``persist`` (DVC leaves it in place while the stage runs) and kept in git (``cache: false``),
so a fresh clone has it and the stage's run cache plays no part. It logs nothing to MLflow:
it computes nothing and takes no params of its own.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

from stages.common.runtime.dvcfile import PARAMS_STAGE
from stages.common.runtime.params import ParamsError, load_common, load_study, read_params, repo_root, study_params_files

MARKER = "reports/params.ok"
MARKER_TEXT = "every study's params are valid (all profiles); written by claimbench/params_check.py\n"
STAGE = PARAMS_STAGE


def params_module(root: Path, study: str, params_file: Path) -> str:
    """The module that names a study's params model (``PARAMS``): its params.py, else its stage.py
    (the corpora)."""
    folder = params_file.parent.relative_to(root)
    return ".".join(folder.parts) + (".params" if (root / folder / "params.py").exists() else ".stage")


def check_study(root: Path, study: str, files: dict[str, Path] | None = None) -> None:
    """Validate one study's params file (all profiles); raises ParamsError naming what is wrong."""
    files = files if files is not None else study_params_files(root)
    if study not in files:
        raise ParamsError(f"no study {study!r}: no stages/{study}/params.json (studies: {', '.join(sorted(files))})")
    try:
        cls = getattr(importlib.import_module(params_module(root, study, files[study])), "PARAMS")
    except (AttributeError, ModuleNotFoundError) as err:
        raise ParamsError(f"its params model could not be loaded ({err})") from None
    load_study(study, cls, read_params(root, studies=[study]))


def problems(root: Path, studies: list[str] | None = None) -> list[str]:
    """One line per study whose params are invalid (and one for ``common``); empty when all are valid."""
    out = []
    try:
        load_common(read_params(root, studies=[]))
    except ParamsError as err:
        return [str(err)]               # every study reads common too: one line says it
    files = study_params_files(root)
    for study in studies or sorted(files):
        try:
            check_study(root, study, files)
        except ParamsError as err:
            out.append(f"{study}: {err}")
    return out


def main() -> int:
    root = repo_root()
    bad = problems(root)
    if bad:
        print("params rejected; no stage has run and no output was touched:", file=sys.stderr)
        for line in bad:
            print(f"  {line}", file=sys.stderr)
        return 2
    marker = root / MARKER
    if not marker.exists() or marker.read_text() != MARKER_TEXT:
        from stages.common.io import write_text

        write_text(marker, MARKER_TEXT)
    print(f"params valid: {len(study_params_files(root))} params files, all profiles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
