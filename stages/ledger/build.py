"""The ledger stage: every study's claims.yaml checked against its measured metrics.

Writes reports/claims.json (one object per claim), reports/claims.md (the overview of the
studies, then a table of the claims), reports/claims/<study>.md (one study's section: what its
README links to, with every seed's figure), and reports/index.html with its plot thumbnails under
reports/ledger/ (an offline page, no CDN: see stages/ledger/page.py). A failing claim is a
result, not an error: this stage always writes the ledger; ``claimbench check`` is the gate.

Claims of the contract v2 are judged over the profile's verdict seeds (``common.seeds``); see
stages/common/claims.py. (A study's section is not ``reports/<study>/claims.md``: this stage
depends on ``reports/<study>``, and an out inside its own dep would make it stale after every run.)

Besides the studies' claims and reports it reads two files of its own: ``papers.yaml`` (each
study's paper: title, venue, arXiv or OpenReview id) and ``runs.json`` (which stage wrote each
study's metrics file, its md5 in dvc.lock, the MLflow runs that made the committed outputs and
why a stage has none, and their compute time: written outside DVC by ``python -m
stages.ledger.runs``, see there). Each row of claims.json gets ``computed_by`` (that stage, the
md5, its run id, or why it has none; ``stale`` when the metrics file read here is not the one
runs.json recorded). The MLflow store itself is never read here: whether this checkout holds the
runs depends on the machine, and the outputs must not (see page.store_note).

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

from stages.common.runtime.stage import stage

from .format import VERDICTS, check_text, figure_name, figure_text, fmt, verdict_of
from .params import LedgerParams

CLAIMS_JSON, CLAIMS_MD, INDEX_HTML = "reports/claims.json", "reports/claims.md", "reports/index.html"
STUDY_MD = "reports/claims/{study}.md"
THUMBS = "reports/ledger/thumbs"
PAPERS, RUNS = Path(__file__).with_name("papers.yaml"), Path(__file__).with_name("runs.json")
README, START, END = "README.md", "<!-- studies:start -->", "<!-- studies:end -->"


def collect(root: Path, profile: str, seeds: list[int] | None = None) -> list[dict]:
    """Every study's claims, judged (v2 claims over the verdict ``seeds``)."""
    from stages.common.claims import evaluate_file

    rows = []
    for claims_file in sorted((root / "stages").glob("*/claims.yaml")):
        for r in evaluate_file(claims_file, root, seeds):
            rows.append({**r, "profile": profile})
    return rows


def load_papers(path: Path = PAPERS) -> dict:
    return yaml.safe_load(path.read_text()) if path.exists() else {}


def load_runs(path: Path = RUNS) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def paper_markdown(o: dict) -> str:
    """An overview row's paper: title (venue, a link to its arXiv or OpenReview page, or
    "no arXiv id")."""
    link = f"[{o['link']['label']}]({o['link']['href']})" if o["link"] else "no arXiv id"
    return f"{o['title']} ({o['venue'] + ', ' if o['venue'] else ''}{link})"


def overview_markdown(rows: list[dict], papers: dict, runs: dict) -> list[str]:
    """The page's overview as a Markdown table (first in claims.md)."""
    from .page import compute_text, overview

    lines = ["| study | paper (venue, link) | must held | should held | fidelity | default compute |",
             "|---|---|---|---|---|---|"]
    for o in overview(rows, papers, runs):
        cells = [f"[{o['study']}](../stages/{o['study']}/README.md)", paper_markdown(o),
                 o["must"], o["should"], o["fidelity"], compute_text(o["compute_s"])]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines


def runs_markdown(rows: list[dict], runs: dict, profile: str, md5_now: dict | None = None) -> list[str]:
    """claims.md's "Runs" section: where the run ids are, then per study what computed its
    claims and the runs of the stages upstream (or why a stage has none)."""
    from .page import provenance, provenance_text, store_note

    lines = [store_note(runs, profile), "",
             "| study | claims computed by | stages upstream |", "|---|---|---|"]
    for study in sorted({r["study"] for r in rows}):
        pv = provenance(study, runs, profile, (md5_now or {}).get(study))
        up = "; ".join(f"{u['stage']} {u['run_id']}" if u["run_id"] else f"{u['stage']}: no run ({u['why']})"
                       for u in (pv or {}).get("upstream", [])) or "—"
        lines.append(_md([study, provenance_text(pv), up]))
    return lines


def totals_markdown(rows: list[dict]) -> list[str]:
    """The must claims per verdict (contract v2 over seeds; v1, one seed, apart) and the decisive
    share, as the page's totals say them."""
    from .page import decisive_text, verdict_counts

    c = verdict_counts(rows)
    lines = []
    if sum(c["v2"].values()):
        lines.append("Must claims judged over the verdict seeds: " +
                     ", ".join(f"{n} {v}" for v, n in c["v2"].items() if n) +
                     f"; decisive share (holds + fails) / musts: {decisive_text(c['decisive'])}.")
    if sum(c["v1"].values()):
        lines.append("Must claims of one seed (claims contract v1, counted apart until their study "
                     "moves): " + ", ".join(f"{n} {v}" for v, n in c["v1"].items() if n) + ".")
    return lines


def _row_cells(r: dict) -> list[str]:
    fid = r["fidelity"] + (f" ({r['why']})" if r["why"] else "")
    return [f"**{r['id']}**: {r['statement']}", r["level"], f"{r['paper']} ({r['where']})",
            figure_text(r), seeds_text(r), f"`{check_text(r)}`", verdict_of(r), fid]


def seeds_text(r: dict) -> str:
    """'5 seeds (interval)', '1 seed' for a v1 row, 'retired'."""
    if verdict_of(r) == "retired":
        return "retired"
    if r.get("contract", 1) == 1:
        return "1 seed"
    if r.get("deterministic") and r["n"] == 1:
        return "deterministic"
    return f"{r['n']} seed{'s' if r['n'] != 1 else ''} ({r['rule']})"


def _md(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def to_markdown(rows: list[dict], profile: str, papers: dict | None = None, runs: dict | None = None,
                md5_now: dict | None = None) -> str:
    lines = [
        "# Claims ledger", "",
        f"Profile `{profile}`. Every measured figure comes from this repository's pipeline "
        "(`dvc repro`); `fidelity` says how close the experiment is to the paper's.", "",
        *totals_markdown(rows),
        "", "## Studies", "", *overview_markdown(rows, papers or {}, runs or {}), "", "## Claims", "",
        "| study | claim | level | paper figure | measured | seeds | check | verdict | fidelity |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(_md([r["study"], *_row_cells(r)]))
    notes = notes_lines(rows)
    if notes:
        lines += ["", "## Notes", "", *notes]
    lines += ["", "## Runs", "", *runs_markdown(rows, runs or {}, profile, md5_now)]
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
        out.append(f"- **{r['study']}/{r['id']}** ({verdict_of(r)}): {text}")
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


def study_markdown(study: str, rows: list[dict], profile: str, computed_by: str = "") -> str:
    """One study's section of the ledger (``reports/claims/<study>.md``): its claims with their
    verdicts, then each claim of the contract v2 with every seed's figure, its control, its
    registration and revisions. A study's README links here instead of typing results."""
    lines = [f"# {study}: claims ledger", "",
             f"Profile `{profile}`, written by the ledger stage (`dvc repro`) from "
             f"`stages/{study}/claims.yaml` and the study's metrics; do not edit.", "",
             f"Paper: {rows[0]['source']}", "",
             *([f"Computed by: {computed_by} (stages/ledger/runs.json; the run is in the MLflow store of "
                "the machine that ran it, not in git)", ""] if computed_by else []),
             *totals_markdown(rows), "",
             "| claim | level | paper figure | measured | seeds | check | verdict | fidelity |",
             "|---|---|---|---|---|---|---|---|", *(_md(_row_cells(r)) for r in rows)]
    for r in rows:
        if r.get("contract", 1) == 1 and not r.get("note") and not r.get("context"):
            continue
        lines += ["", f"## {r['id']} ({r['level']}): {verdict_of(r)}", "", r["statement"], ""]
        if r.get("contract", 1) == 2 and r.get("per_seed"):
            seeds = list(r["per_seed"])
            ctl = (r.get("control") or {}).get("per_seed") or {}
            lines += ["| seed | " + " | ".join(seeds) + " |", "|---" * (len(seeds) + 1) + "|",
                      _md([figure_name(r), *(fmt(r["per_seed"][s]) for s in seeds)])]
            if ctl:
                lines.append(_md([f"control: {r['control']['metric']}", *(fmt(ctl.get(s)) for s in seeds)]))
            lines.append("")
            lines.append(f"- rule `{r['rule']}`: mean {fmt(r['mean'])}, 90 % interval "
                         f"{fmt(r['interval'])} ({r.get('method') or '—'}); verdict {verdict_of(r)}")
            if r.get("effect"):
                lines.append(f"- effect: d_z = {fmt(r['effect']['d_z'])}, P(A > B) = {fmt(r['effect']['p_greater'])}")
            if r.get("control"):
                c = r["control"]
                lines.append(f"- control `{c['metric']}` (the paper's contribution taken out): {c['verdict']}, "
                             f"mean {fmt(c['mean'])}, 90 % interval {fmt(c['interval'])}")
            elif r.get("why_no_control"):
                lines.append(f"- no control: {r['why_no_control']}")
            if r.get("constant"):
                lines.append("- **the same value on every seed**, and the claim is not declared deterministic")
        if r.get("retired"):
            lines.append(f"- retired {r['retired']['date']}: {r['retired']['why']} (last verdict "
                         f"{r['retired']['last_verdict']})")
        if r.get("registered"):
            lines.append(f"- registered {r['registered']}")
        for rev in r.get("revisions") or []:
            lines.append(f"- revised {rev['date']}: {rev['change']} (why: {rev['why']})")
        if r.get("note"):
            lines.append(f"- note: {r['note'].strip()}")
        ctx = "; ".join(f"{k} = {fmt(v)}" for k, v in (r.get("context") or {}).items())
        if ctx:
            lines.append(f"- measured beside it: {ctx}")
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


def metrics_md5(root: Path, runs: dict, profile: str) -> dict[str, str]:
    """{study: md5 of the metrics file its claims read, as DVC hashes it} for every study runs.json
    names one for: the file under reports/<study>/ (a dep of this stage) or the folder that
    dvc.lock records it by."""
    from stages.common.io import dvc_md5

    from .page import _profile_of

    out = {}
    for study in runs.get(profile, runs.get("default", {})).get("studies", {}):
        c = runs.get(_profile_of(study, runs, profile), {}).get("studies", {}).get(study, {}).get("claims") or {}
        path = root / (c.get("lock_path") or c.get("metrics") or "")
        if c.get("metrics") and path.exists():
            out[study] = dvc_md5(path)
    return out


def add_computed_by(rows: list[dict], runs: dict, profile: str, md5_now: dict[str, str]) -> None:
    """Each row's ``computed_by``: the stage that wrote the metrics file it reads, that file's
    md5 in the stage's dvc.lock entry, the stage's MLflow run id (None, with ``no_run``, where it
    has none) and ``stale``; None where runs.json has no record of the study."""
    from .page import provenance

    for r in rows:
        pv = provenance(r["study"], runs, profile, md5_now.get(r["study"]))
        r["computed_by"] = None if pv is None else {
            "metrics": pv["metrics"], "stage": pv["stage"], "dvc_lock": {"path": pv["lock_path"], "md5": pv["md5"]},
            "run_id": pv["run"]["run_id"], "host": pv["run"]["host"] or None, "day": pv["run"]["day"] or None,
            "no_run": pv["run"]["why"] or None, "upstream_runs": {u["stage"]: u["run_id"] for u in pv["upstream"]},
            "stale": pv["stale"]}


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

        rows = collect(ctx.root, profile, ctx.seeds)
        papers, runs = load_papers(), load_runs()
        md5_now = metrics_md5(ctx.root, runs, profile)
        add_computed_by(rows, runs, profile, md5_now)
        write_json(ctx.path(CLAIMS_JSON), rows)
        write_text(ctx.path(CLAIMS_MD), to_markdown(rows, profile, papers, runs, md5_now))
        studies = sorted({r["study"] for r in rows})
        from .page import provenance, provenance_text

        for study in studies:
            by = provenance_text(provenance(study, runs, profile, md5_now.get(study)))
            write_text(ctx.path(STUDY_MD.format(study=study)),
                       study_markdown(study, [r for r in rows if r["study"] == study], profile, by))
        stale = [p for p in ctx.path(STUDY_MD.format(study="x")).parent.glob("*.md") if p.stem not in studies]
        for p in stale:                     # a study that was removed
            p.unlink()
        plots = make_thumbs(ctx.root, studies)
        print(f"  {sum(map(len, plots.values()))} plot thumbnails in {THUMBS}", flush=True)
        page = to_html(rows, profile, ctx.params.build.title, papers, runs, plots, md5_now)
        write_text(ctx.path(INDEX_HTML), page)
        print(f"  {INDEX_HTML}: {len(page.encode()) / 1e6:.2f} MB", flush=True)
        if refresh_readme(ctx.path(README), studies_table(rows)):
            print(f"  refreshed the table of studies in {README}", flush=True)
        counts = {"claims": len(rows),
                  **{v.replace(" ", "_"): sum(verdict_of(r) == v for r in rows) for v in VERDICTS},
                  "must_not_holding": sum(r["level"] == "must" and verdict_of(r) not in ("holds", "retired")
                                          for r in rows)}
        ctx.run.log_metrics({"ledger": counts})
        ctx.run.alias_models("ledger")      # registered models: `ledger` on the versions behind these reports
        for r in rows:
            print(f"  {verdict_of(r):12s} {r['level']:6s} {r['study']}/{r['id']}: "
                  f"measured {figure_text(r)} ({seeds_text(r)}), check {check_text(r)}")


if __name__ == "__main__":
    main()
