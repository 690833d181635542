"""The ledger stage: every study's claims.yaml checked against its measured metrics.

Writes reports/claims.json (one object per claim), reports/claims.md (a table) and
reports/index.html (an offline page: plots embedded, no CDN). A failing claim is a result,
not an error: this stage always writes the ledger; ``claimbench check`` is the gate.

It also refreshes the table of studies in README.md, between the markers
``<!-- studies:start -->`` and ``<!-- studies:end -->`` (study, paper, must claims held,
fidelity, a link to the study's README). README.md is not a DVC out: it is prose under git, and
editing it must re-run nothing; only the lines between the markers are the ledger's, and they
are a function of the ledger's own inputs. A README without the markers is left alone.
"""
from __future__ import annotations

import base64
import html
from pathlib import Path

from stages.common.stage import stage

from .params import LedgerParams

CLAIMS_JSON, CLAIMS_MD, INDEX_HTML = "reports/claims.json", "reports/claims.md", "reports/index.html"
README, START, END = "README.md", "<!-- studies:start -->", "<!-- studies:end -->"


def collect(root: Path, profile: str) -> list[dict]:
    from stages.common.claims import evaluate_file

    rows = []
    for claims_file in sorted((root / "stages").glob("*/claims.yaml")):
        for r in evaluate_file(claims_file, root):
            rows.append({**r, "profile": profile})
    return rows


def fmt(x) -> str:
    if x is None:
        return "—"
    if isinstance(x, list):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def verdict(holds) -> str:
    return {True: "holds", False: "fails", None: "not run"}[holds]


def check_text(r: dict) -> str:
    return f"{r['metric']} {r['op']} {fmt(r['threshold'])}"


def to_markdown(rows: list[dict], profile: str) -> str:
    n_hold = sum(r["holds"] is True for r in rows)
    lines = [
        "# Claims ledger", "",
        f"Profile `{profile}`: {n_hold} of {len(rows)} claims hold. Every measured figure comes from "
        "this repository's pipeline (`dvc repro`); `fidelity` says how close the experiment is to the paper's.",
        "",
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


def to_html(rows: list[dict], profile: str, title: str, root: Path) -> str:
    css = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}"
           "table{border-collapse:collapse;font-size:0.9em}td,th{border:1px solid #ccc;padding:4px 6px;"
           "vertical-align:top}th{background:#f3f3f3}.holds{background:#e3f6e3}.fails{background:#fbe3e3}"
           ".notrun{background:#eee}img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}")
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
           f"<style>{css}</style></head><body><h1>{html.escape(title)}</h1>",
           f"<p>Profile <code>{html.escape(profile)}</code>. {sum(r['holds'] is True for r in rows)} of "
           f"{len(rows)} claims hold.</p>",
           "<table><tr><th>study</th><th>claim</th><th>level</th><th>paper</th><th>measured</th>"
           "<th>check</th><th>verdict</th><th>fidelity</th></tr>"]
    for r in rows:
        cls = {True: "holds", False: "fails", None: "notrun"}[r["holds"]]
        fid = r["fidelity"] + (f": {r['why']}" if r["why"] else "")
        cells = [r["study"], f"<b>{html.escape(r['id'])}</b><br>{html.escape(r['statement'])}",
                 r["level"], html.escape(f"{r['paper']} ({r['where']})"), fmt(r["measured"]),
                 f"<code>{html.escape(check_text(r))}</code>", verdict(r["holds"]), html.escape(fid)]
        out.append(f"<tr class='{cls}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    notes = noted(rows)
    if notes:
        out.append("<h2>Notes</h2><ul>")
        for r, note, ctx in notes:
            body = html.escape(note)
            if ctx:
                body += f" <i>Measured beside it:</i> <code>{html.escape(ctx)}</code>."
            out.append(f"<li><b>{html.escape(r['study'])}/{html.escape(r['id'])}</b> "
                       f"({verdict(r['holds'])}): {body}</li>")
        out.append("</ul>")
    for study in sorted({r["study"] for r in rows}):
        out.append(f"<h2>{html.escape(study)}</h2>")
        for png in sorted((root / "reports" / study).glob("*.png")):
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            out.append(f"<figure><img alt='{html.escape(png.name)}' src='data:image/png;base64,{data}'>"
                       f"<figcaption>{html.escape(png.name)}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def studies_table(rows: list[dict]) -> str:
    """One Markdown row per study: its paper, must and should claims held, fidelity labels."""
    lines = ["| study | paper | must claims held | should claims held | fidelity |",
             "|---|---|---|---|---|"]
    for study in sorted({r["study"] for r in rows}):
        mine = [r for r in rows if r["study"] == study]

        def held(level: str) -> str:
            of = [r for r in mine if r["level"] == level]
            if not of:
                return "—"
            text = f"{sum(r['holds'] is True for r in of)} of {len(of)}"
            not_run = sum(r["holds"] is None for r in of)
            return text + (f" ({not_run} not run)" if not_run else "")

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


def main() -> None:
    with stage("ledger", "build", LedgerParams, stage_name="ledger") as ctx:
        from stages.common.io import write_json, write_text

        profile = ctx.common.profile
        rows = collect(ctx.root, profile)
        write_json(ctx.path(CLAIMS_JSON), rows)
        write_text(ctx.path(CLAIMS_MD), to_markdown(rows, profile))
        write_text(ctx.path(INDEX_HTML), to_html(rows, profile, ctx.params.build.title, ctx.root))
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
