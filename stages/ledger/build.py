"""The ledger stage: every study's claims.yaml checked against its measured metrics.

Writes reports/claims.json (one object per claim), reports/claims.md (the overview of the
studies, then a table of the claims) and reports/index.html with its plot thumbnails under
reports/ledger/ (an offline page, no CDN: see stages/ledger/page.py). A failing claim is a
result, not an error: this stage always writes the ledger; ``claimbench check`` is the gate.

Besides the studies' claims and reports it reads two files of its own: ``papers.yaml`` (each
study's paper title, seed file and position) and ``runs.json`` (the MLflow runs that made the
committed outputs, and their compute time: written outside DVC by ``python -m
stages.ledger.runs``, see there).

It also refreshes the table of studies in README.md, between the markers
``<!-- studies:start -->`` and ``<!-- studies:end -->`` (study, paper, must claims held,
fidelity, a link to the study's README). README.md is not a DVC out: it is prose under git, and
editing it must re-run nothing; only the lines between the markers are the ledger's, and they
are a function of the ledger's own inputs. A README without the markers is left alone.
"""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from stages.common.stage import stage

from .format import check_text, fmt, verdict
from .params import LedgerParams

CLAIMS_JSON, CLAIMS_MD, INDEX_HTML = "reports/claims.json", "reports/claims.md", "reports/index.html"
THUMBS = "reports/ledger/thumbs"
PAPERS, RUNS = Path(__file__).with_name("papers.yaml"), Path(__file__).with_name("runs.json")
README, START, END = "README.md", "<!-- studies:start -->", "<!-- studies:end -->"


def collect(root: Path, profile: str) -> list[dict]:
    from stages.common.claims import evaluate_file

    rows = []
    for claims_file in sorted((root / "stages").glob("*/claims.yaml")):
        for r in evaluate_file(claims_file, root):
            rows.append({**r, "profile": profile})
    return rows


def load_papers(path: Path = PAPERS) -> dict:
    return yaml.safe_load(path.read_text()) if path.exists() else {}


def load_runs(path: Path = RUNS) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def overview_markdown(rows: list[dict], papers: dict, runs: dict) -> list[str]:
    """The page's overview as a Markdown table (first in claims.md)."""
    from .page import compute_text, overview

    lines = ["| study | paper (seed file, position) | must held | should held | fidelity | default compute |",
             "|---|---|---|---|---|---|"]
    for o in overview(rows, papers, runs):
        cells = [f"[{o['study']}](../stages/{o['study']}/README.md)", f"{o['title']} ({o['seed']})",
                 o["must"], o["should"], o["fidelity"], compute_text(o["compute_s"])]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines


def to_markdown(rows: list[dict], profile: str, papers: dict | None = None, runs: dict | None = None) -> str:
    n_hold = sum(r["holds"] is True for r in rows)
    lines = [
        "# Claims ledger", "",
        f"Profile `{profile}`: {n_hold} of {len(rows)} claims hold. Every measured figure comes from "
        "this repository's pipeline (`dvc repro`); `fidelity` says how close the experiment is to the paper's.",
        "", "## Studies", "", *overview_markdown(rows, papers or {}, runs or {}), "", "## Claims", "",
        "| study | claim | level | paper figure | measured | check | verdict | fidelity |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        fid = r["fidelity"] + (f" ({r['why']})" if r["why"] else "")
        lines.append("| " + " | ".join(s.replace("|", "\\|") for s in [
            r["study"], f"**{r['id']}**: {r['statement']}", r["level"],
            f"{r['paper']} ({r['where']})", fmt(r["measured"]), f"`{check_text(r)}`",
            verdict(r["holds"]), fid]) + " |")
    notes = notes_lines(rows)
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


def noted(rows: list[dict]) -> list[tuple[dict, str, str]]:
    """(row, note, context text) for every claim with a note or context figures (measured,
    from its metrics file): what both the Markdown and the HTML notes list."""
    out = []
    for r in rows:
        note = r.get("note", "").strip()
        ctx = "; ".join(f"{k} = {fmt(v)}" for k, v in r.get("context", {}).items())
        if note or ctx:
            out.append((r, note, ctx))
    return out


def notes_lines(rows: list[dict]) -> list[str]:
    """One Markdown bullet per noted claim."""
    out = []
    for r, note, ctx in noted(rows):
        text = note
        if ctx:
            text += (" " if text else "") + f"Measured beside it: {ctx}."
        out.append(f"- **{r['study']}/{r['id']}** ({verdict(r['holds'])}): {text}")
    return out


def studies_table(rows: list[dict]) -> str:
    """One Markdown row per study: its paper, must and should claims held, fidelity labels."""
    from .page import held_text

    lines = ["| study | paper | must claims held | should claims held | fidelity |",
             "|---|---|---|---|---|"]
    for study in sorted({r["study"] for r in rows}):
        mine = [r for r in rows if r["study"] == study]

        def held(level: str) -> str:
            return held_text(mine, level, sep=" of ")

        fid = ", ".join(sorted({r["fidelity"] for r in mine}))
        paper = mine[0]["source"].replace("|", "\\|")
        lines.append(f"| [{study}](stages/{study}/README.md) | {paper} | {held('must')} | {held('should')} | {fid} |")
    return "\n".join(lines) + "\n"


def refresh_readme(path: Path, table: str) -> bool:
    """Put ``table`` between the markers of ``path``; False (nothing written) when the file or
    its markers are missing, or the table is already there."""
    if not path.exists():
        return False
    text = path.read_text()
    if START not in text or END not in text or text.index(START) > text.index(END):
        return False
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{START}\n{table}{END}{tail}"
    if new == text:
        return False
    from stages.common.io import write_text

    write_text(path, new)
    return True


def make_thumbs(root: Path, studies: list[str]) -> dict[str, list[dict]]:
    """A WebP thumbnail (at most page.THUMB_W px wide) of every PNG under reports/<study>/, in
    reports/ledger/thumbs/<study>/; {study: [{name, thumb, full, w, h}]}, paths relative to
    reports/ (where the page is)."""
    import io as _io

    from PIL import Image

    from stages.common.io import write_bytes

    from .page import THUMB_W

    reports = root / "reports"
    out: dict[str, list[dict]] = {}
    for study in studies:
        for png in sorted((reports / study).rglob("*.png")):
            rel = png.relative_to(reports / study)
            with Image.open(png) as im:
                im.load()
                if im.width > THUMB_W:
                    im = im.resize((THUMB_W, round(im.height * THUMB_W / im.width)), Image.LANCZOS)
                buf = _io.BytesIO()
                im.save(buf, format="WEBP", quality=80, method=4)
                w, h = im.size
            thumb = root / THUMBS / study / rel.with_suffix(".webp")
            write_bytes(thumb, buf.getvalue())
            out.setdefault(study, []).append({"name": str(rel), "w": w, "h": h,
                                              "thumb": str(thumb.relative_to(reports)),
                                              "full": str(png.relative_to(reports))})
    return out


def main() -> None:
    with stage("ledger", "build", LedgerParams, stage_name="ledger") as ctx:
        from stages.common.io import write_json, write_text

        profile = ctx.common.profile
        from .page import to_html

        rows = collect(ctx.root, profile)
        papers, runs = load_papers(), load_runs()
        write_json(ctx.path(CLAIMS_JSON), rows)
        write_text(ctx.path(CLAIMS_MD), to_markdown(rows, profile, papers, runs))
        plots = make_thumbs(ctx.root, sorted({r["study"] for r in rows}))
        print(f"  {sum(map(len, plots.values()))} plot thumbnails in {THUMBS}", flush=True)
        page = to_html(rows, profile, ctx.params.build.title, papers, runs, plots)
        write_text(ctx.path(INDEX_HTML), page)
        print(f"  {INDEX_HTML}: {len(page.encode()) / 1e6:.2f} MB", flush=True)
        if refresh_readme(ctx.path(README), studies_table(rows)):
            print(f"  refreshed the table of studies in {README}", flush=True)
        counts = {"claims": len(rows), "hold": sum(r["holds"] is True for r in rows),
                  "fail": sum(r["holds"] is False for r in rows),
                  "not_run": sum(r["holds"] is None for r in rows),
                  "must_failed": sum(r["level"] == "must" and r["holds"] is not True for r in rows)}
        ctx.run.log_metrics({"ledger": counts})
        ctx.run.alias_models("ledger")      # registered models: `ledger` on the versions behind these reports
        for r in rows:
            print(f"  {verdict(r['holds']):8s} {r['level']:6s} {r['study']}/{r['id']}: "
                  f"measured {fmt(r['measured'])}, check {check_text(r)}")


if __name__ == "__main__":
    main()
