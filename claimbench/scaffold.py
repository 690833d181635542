"""``claimbench new-study NAME``: the skeleton of a new study, wired into the pipeline.

Writes, from the templates in ``claimbench/study_template/``:

* ``stages/NAME/``: ``params.py`` (typed, validated) and ``params.json`` (the three profiles),
  ``paths.py`` (every file the stages read or write), ``prepare.py`` / ``train.py`` / ``evaluate.py``
  (a ridge regression on generated data, saved as
  a Hugging Face dataset: something real to replace), ``claims.yaml`` (one placeholder claim,
  which the ledger shows as not run until the study measures it) and ``README.md`` (the six
  headings every study README has);
* ``tests/NAME/``: the params tests (every profile validates, a bad value is named, a stage
  stops before compute, a missing input names the stage to run) and the determinism test;
* ``stages/NAME/dvc.yaml``: the study's three stages, with their code deps from the import graph
  (:mod:`claimbench.depgraph`); and, in the root dvc.yaml, the study in the ledger's deps (its
  claims file and its reports folder), so that the ledger picks it up with nothing else edited.
"""
from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).with_name("study_template")
NAME = re.compile(r"^[a-z][a-z0-9_]{1,38}[a-z0-9]$")
RESERVED = {"common", "ledger", "corpora", "pipeline", "stages", "tests", "flows", "data", "reports"}


class ScaffoldError(ValueError):
    """The study cannot be written (a bad or taken name, a dvc.yaml we cannot place it in)."""


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def render(text: str, values: dict[str, str]) -> str:
    """A template of the study skeleton filled in (Jinja2: ``{{study}}``, ``{{title}}``, ...); a
    placeholder with no value is an error, not an empty string. No autoescape: the templates are
    Python, YAML, JSON and Markdown, not HTML."""
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             autoescape=False)
    try:
        return env.from_string(text).render(**values)
    except jinja2.UndefinedError as err:
        raise ScaffoldError(f"template placeholders without a value: {err.message}") from None


def check_name(root: Path, name: str) -> None:
    if not NAME.match(name) or "__" in name:
        raise ScaffoldError(f"study name {name!r}: use 3-40 characters, lower case letters, digits and "
                            f"single underscores, starting with a letter (e.g. jsp_multipolicy)")
    if name in RESERVED:
        raise ScaffoldError(f"study name {name!r} is reserved")
    for taken in (root / "stages" / name, root / "tests" / name):
        if taken.exists():
            raise ScaffoldError(f"{taken.relative_to(root)} already exists: study {name!r} is taken")
    from stages.common.runtime.dvcfile import load_stages

    taken = sorted(n for n in load_stages(root) if n.split("-")[0] == name)
    if taken:
        raise ScaffoldError(f"the pipeline already has stages of {name!r}: {', '.join(taken)}")


def add_to_ledger(text: str, name: str) -> str:
    """The root dvc.yaml's text with the study's claims file and reports folder appended to the
    ledger's deps (the ledger reads every study's claims against its metrics); the rest of the
    file as it was (ruamel round-trip)."""
    from stages.common.runtime.params import dump_yaml, round_trip_yaml

    data = round_trip_yaml().load(text)
    ledger = ((data or {}).get("stages") or {}).get("ledger")
    if ledger is None:
        raise ScaffoldError("dvc.yaml has no `ledger:` stage")
    if not isinstance(ledger.get("deps"), list):
        raise ScaffoldError("the ledger stage in dvc.yaml has no `deps:` list")
    ledger["deps"].extend([f"stages/{name}/claims.yaml", f"reports/{name}"])
    return dump_yaml(data)


def new_study(root: Path, name: str, title: str = "", paper: str = "") -> list[Path]:
    """Write the study's skeleton under ``root``; return the files written (the root dvc.yaml last)."""
    from claimbench.depgraph import planned_deps, rewrite_deps, stage_module
    from stages.common.io import write_text

    check_name(root, name)
    import datetime as dt

    values = {"study": name, "Study": camel(name), "title": title or "(the paper's central claim, in a line)",
              "paper": (paper or "authors, title (NeurIPS 2025, arXiv id)").replace('"', "'"),
              "today": dt.date.today().isoformat()}
    written = []
    for tmpl in sorted(TEMPLATES.rglob("*.tmpl")):
        rel = tmpl.relative_to(TEMPLATES)
        if rel.name == "dvc.yaml.tmpl":
            continue
        base = root / "tests" / name if rel.parts[0] == "tests" else root / "stages" / name
        target = base / Path(*rel.parts[1:] if rel.parts[0] == "tests" else rel.parts).with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text(target, render(tmpl.read_text(), values))
        written.append(target)
    study_dvc = root / "stages" / name / "dvc.yaml"
    text = render((TEMPLATES / "dvc.yaml.tmpl").read_text(), values)
    from stages.common.runtime.params import round_trip_yaml

    for step in ("prepare", "train", "evaluate"):      # code deps from what the modules import
        stage_name = f"{name}-{step}"
        spec = round_trip_yaml().load(text)["stages"][stage_name]
        new = planned_deps(root, [str(d) for d in spec["deps"]], stage_module(spec["cmd"]))
        text = rewrite_deps(text, stage_name, new)
    write_text(study_dvc, text)
    written.append(study_dvc)
    text = add_to_ledger((root / "dvc.yaml").read_text(), name)
    if "\n  params:\n" in text:        # the params stage validates the new study's params too
        from claimbench.depgraph import PARAMS_CHECK
        from claimbench.params_check import STAGE

        text = rewrite_deps(text, STAGE, planned_deps(root, [], PARAMS_CHECK))
    write_text(root / "dvc.yaml", text)
    written.append(root / "dvc.yaml")
    return written
