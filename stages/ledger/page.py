"""The ledger page, ``reports/index.html``: what a researcher opens first.

Layout, top to bottom: the totals; the changes since the last committed ledger (see below); the
filters; the overview (one row per study, coloured by its worst must verdict: its paper's title,
venue and a link to its arXiv (or OpenReview) page, from papers.yaml, must and should claims held
out of all, fidelity labels, default-profile compute time, links to its section and its README);
then one section per study: its claims (statement first, a strip of the per-seed values, the
paper's figure, where, note, context, what computed it and the claims contract's figures folded
in a ``<details>``), its plots, and the MLflow runs that made them.

Provenance (stages/ledger/runs.json, see runs.py): each claim names the stage that wrote the
metrics file it reads, that file's md5 in the stage's dvc.lock entry and the stage's MLflow run
id; each study lists the runs of all its stages and, for a stage without one, why. The run ids
live in the MLflow store of the machine that ran them (mlruns.db, git-ignored): the page says so
in the same words on every machine (:func:`store_note`), since the committed page must be
byte-identical wherever it is built; whether this checkout's store holds them is said at run
time by ``python -m stages.ledger.runs --check``, never written into the page.

Totals (docs/VERDICTS.md, section 5): the must claims of contract v2 (judged on several
seeds) counted per verdict, and their **decisive share**, (holds + fails) / musts, retired claims
left out (they are no longer judged); the must claims of a ledger row of contract v1 (one seed,
``holds`` true / false / null) are counted apart, labelled "1 seed".

The seed strip of a claim is an inline SVG drawn here (no JS library): one dot per verdict seed
(``per_seed``), the threshold (two lines for ``between``), the interval as a bar and the mean as
a tick, and the control arm's dots on a second row in another colour; each strip is scaled to
its own values. A v1 row has no strip, just "1 seed".

Filters by verdict (every verdict of :data:`VERDICTS`), level and fidelity, and a text search, in
plain inline JS: no CDN, no web fonts, nothing fetched. One button shows only the claims that do
not hold (every verdict but holds and retired).

The HTML comes from the Jinja2 templates in ``templates/`` (autoescaped; the CSS and JS are
templates of their own, included inline: the page stays one file). A field of a row is never
marked safe: what a claims.yaml says is shown as text.

Size budget: the HTML itself ≤ 1 MB at 15 studies (so ≤ ~2.5 MB at 38): no plot is embedded.
Each plot is a WebP thumbnail (≤ ``THUMB_W`` px wide) beside the page in
``reports/ledger/thumbs/<study>/``, loaded lazily (``loading="lazy"``) and linking to the full
PNG in ``reports/<study>/``. tests/ledger checks the budget on the page it builds.

The comparison with the last committed ledger is not computed here: this is a DVC stage, and
git's HEAD is not one of its deps (reading it would make the page depend on something DVC does
not track, and ``dvc repro`` would no longer be honest). ``claimbench diff --page`` (outside
DVC) writes ``reports/claims-diff.html`` (git-ignored); the page loads it in a hidden iframe,
which hands the comparison over with ``postMessage``. The page takes a message only from that
iframe's window (under file:// every origin is "null", so the sender's window is what can be
checked) and writes it with DOM text nodes, never as markup. Without that file the page says how
to make it (a missing iframe target logs no console error; a missing script would).
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

from .format import VERDICTS, check_text, css_class, fmt, verdict_of

THUMB_W = 480
DIFF_PAGE = "claims-diff.html"
TEMPLATES = Path(__file__).with_name("templates")
# a study's colour in the overview: its worst must verdict, worst first (retired ones are not judged)
WORST_FIRST = ("not run", "fails", "not specific", "inconclusive", "holds")
NOT_FAILING = ("holds", "retired")          # what the "only failing claims" button hides
STRIP_W, STRIP_PAD = 150, 5                 # px: a seed strip's width, the margin at either end


@lru_cache(maxsize=1)
def _env():
    import jinja2          # lazily: the CLI imports this module's neighbours at start-up

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.globals.update(DIFF_PAGE=DIFF_PAGE, compute_text=compute_text)
    return env


def _render(name: str, **context) -> str:
    return _env().get_template(name).render(**context)


def is_v1(r: dict) -> bool:
    """A row of the first claims contract (one seed): ``contract`` 1 or missing."""
    return r.get("contract") in (None, 1)


def held(rows: list[dict], level: str) -> tuple[int, int, int]:
    """(held, all, not run) among ``rows`` of ``level``; retired claims are no longer judged and
    count in none of the three."""
    of = [r for r in rows if r["level"] == level and verdict_of(r) != "retired"]
    return (sum(verdict_of(r) == "holds" for r in of), len(of),
            sum(verdict_of(r) == "not run" for r in of))


def held_text(rows: list[dict], level: str, sep: str = " / ") -> str:
    """'held / all', and how many were not run; '—' when the level has no claim."""
    h, n, nr = held(rows, level)
    if not n:
        return "—"
    return f"{h}{sep}{n}" + (f" ({nr} not run)" if nr else "")


def worst_verdict(rows: list[dict]) -> str:
    """The worst verdict (:data:`WORST_FIRST`) of the judged musts among ``rows``, else of any
    judged claim; 'retired' when every claim is retired."""
    for pool in ([r for r in rows if r["level"] == "must"], rows):
        seen = {verdict_of(r) for r in pool} - {"retired"}
        if seen:
            return next(v for v in WORST_FIRST if v in seen)
    return "retired"


ARXIV_URL, OPENREVIEW_URL = "https://arxiv.org/abs/{}", "https://openreview.net/forum?id={}"


def paper_link(p: dict | None) -> dict | None:
    """{href, label} of a papers.yaml entry's arXiv id, else its OpenReview id; None for neither
    (the page says "no arXiv id"). A link is an ``<a href>``: the page loads nothing from it."""
    if p and p.get("arxiv"):
        return {"href": ARXIV_URL.format(p["arxiv"]), "label": f"arXiv {p['arxiv']}"}
    if p and p.get("openreview"):
        return {"href": OPENREVIEW_URL.format(p["openreview"]), "label": f"OpenReview {p['openreview']}"}
    return None


def overview(rows: list[dict], papers: dict, runs: dict) -> list[dict]:
    """One dict per study: the overview's cells as plain values (the Markdown table uses them too).
    A study missing from papers.yaml shows its claims.yaml `paper:` line, no venue and no link."""
    out = []
    for study in sorted({r["study"] for r in rows}):
        mine = [r for r in rows if r["study"] == study]
        p = papers.get("papers", {}).get(study)
        rec = runs.get("default", {}).get("studies", {}).get(study)
        musts = [verdict_of(r) for r in mine if r["level"] == "must"]
        out.append({
            "study": study,
            "title": p["title"] if p else mine[0]["source"],
            "venue": p.get("venue", "") if p else "",
            "link": paper_link(p),
            "must": held_text(mine, "must"), "should": held_text(mine, "should"),
            "fidelity": ", ".join(sorted({r["fidelity"] for r in mine})),
            "compute_s": rec["compute_s"] if rec and rec["stages"] else None,
            "fails": sum(verdict_of(r) == "fails" for r in mine),
            "worst": worst_verdict(mine),
            "must_verdicts": ", ".join(f"{musts.count(v)} {v}" for v in VERDICTS if v in musts),
        })
    return out


def compute_text(s) -> str:
    if s is None:
        return "—"
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def verdict_counts(rows: list[dict]) -> dict:
    """The must claims per verdict, of contract v2 (``v2``) and v1 (``v1``, one seed) apart, and the
    decisive share of the v2 musts: (holds + fails) / the musts still judged (not retired); None
    when there are none."""
    musts = [r for r in rows if r["level"] == "must"]
    out = {}
    for key, pool in (("v2", [r for r in musts if not is_v1(r)]), ("v1", [r for r in musts if is_v1(r)])):
        vs = [verdict_of(r) for r in pool]
        out[key] = {v: vs.count(v) for v in VERDICTS}
    judged = sum(n for v, n in out["v2"].items() if v != "retired")
    out["decisive"] = (out["v2"]["holds"] + out["v2"]["fails"]) / judged if judged else None
    return out


def decisive_text(share) -> str:
    return "—" if share is None else f"{100 * share:.0f} %"


def _total_groups(rows: list[dict], ov: list[dict]) -> list[tuple[str, str, list[tuple[str, str, str]]]]:
    """The totals as (group title, the group's tag in :func:`totals`, [(label, value, CSS class)]):
    what the page's boxes show."""
    c = verdict_counts(rows)
    sh, sn, _ = held(rows, "should")
    total_s = sum(o["compute_s"] or 0 for o in ov)
    v2 = [(v, str(c["v2"][v]), css_class(v)) for v in VERDICTS]
    v2.append(("decisive share", decisive_text(c["decisive"]), "decisive"))
    groups = [(f"must claims judged on seeds ({sum(c['v2'].values())})", "", v2)]
    n1 = sum(c["v1"].values())
    if n1:
        groups.append((f"must claims of one seed, contract v1 ({n1})", " (1 seed)",
                       [(v, str(n), css_class(v)) for v, n in c["v1"].items() if n]))
    groups.append(("", "", [("studies", str(len(ov)), ""), ("should hold", f"{sh} / {sn}", ""),
                            ("default compute", compute_text(total_s) if total_s else "—", "")]))
    return groups


def totals(rows: list[dict], ov: list[dict]) -> list[tuple[str, str]]:
    """The totals as (label, value): v2 musts per verdict and the decisive share, v1 (1 seed)
    musts per verdict apart ("holds (1 seed)"), studies, should claims held, compute."""
    return [(label + tag, value) for _, tag, items in _total_groups(rows, ov) for label, value, _ in items]


# -- the seed strip ---------------------------------------------------------------------------

def _num(x) -> float | None:
    """``x`` as a finite float, else None."""
    if isinstance(x, (int, float)) and math.isfinite(x):
        return float(x)
    return None


def _seed_values(per_seed) -> list[tuple[str, float]]:
    """(seed, value) of ``per_seed`` ({"0": value, ...}) with a number, by seed."""
    if not isinstance(per_seed, dict):
        return []
    got = [(str(k), _num(v)) for k, v in per_seed.items()]
    return sorted(((k, v) for k, v in got if v is not None),
                  key=lambda kv: (0, int(kv[0]), "") if kv[0].lstrip("-").isdigit() else (1, 0, kv[0]))


def _interval(x) -> tuple[float, float] | None:
    if isinstance(x, (list, tuple)) and len(x) == 2 and None not in map(_num, x):
        return float(x[0]), float(x[1])
    return None


def _thresholds(r: dict) -> list[float]:
    t = r.get("threshold")
    if r.get("op") == "between":
        iv = _interval(t)
        return list(iv) if iv else []
    return [] if _num(t) is None else [float(t)]


def _arm(values, interval, mean) -> list[float]:
    """Every figure of one arm that the strip places."""
    return [v for _, v in values] + list(interval or ()) + ([mean] if mean is not None else [])


def strip(r: dict) -> dict | None:
    """The geometry of a claim's seed strip (numbers only; the template draws it), or None for a
    row without per-seed values (a v1 row)."""
    own = _seed_values(r.get("per_seed"))
    if not own:
        return None
    ctl = r.get("control") if isinstance(r.get("control"), dict) else None
    ctl_vals = _seed_values(ctl.get("per_seed")) if ctl else []
    arms = [("own", own, _interval(r.get("interval")), _num(r.get("mean")))]
    if ctl_vals:
        arms.append(("ctl", ctl_vals, _interval(ctl.get("interval")), _num(ctl.get("mean"))))
    thr = _thresholds(r)
    every = thr + [x for _, vals, iv, m in arms for x in _arm(vals, iv, m)]
    lo, hi = min(every), max(every)
    if hi - lo <= 1e-12 * max(1.0, abs(lo)):          # one value: a window around it
        half = abs(lo) * 0.1 or 1.0
        lo, hi = lo - half, hi + half

    def x(v: float) -> float:
        return round(STRIP_PAD + (v - lo) / (hi - lo) * (STRIP_W - 2 * STRIP_PAD), 1)

    row_h = 14
    rows = []
    for i, (kind, vals, iv, m) in enumerate(arms):
        y = row_h // 2 + i * row_h
        rows.append({"kind": kind, "y": y,
                     "dots": [{"x": x(v), "y": y + ((j % 3) - 1) * 2, "seed": s, "value": fmt(v)}
                              for j, (s, v) in enumerate(vals)],
                     "interval": (x(iv[0]), round(max(x(iv[1]) - x(iv[0]), 1.0), 1)) if iv else None,
                     "mean": x(m) if m is not None else None})
    return {"w": STRIP_W, "h": row_h * len(arms), "rows": rows, "lo": fmt(lo), "hi": fmt(hi),
            "thresholds": [{"x": x(t), "value": fmt(t)} for t in thr]}


# -- a claim as the template shows it ---------------------------------------------------------

def _iv_text(mean, interval) -> str:
    iv = _interval(interval)
    return fmt(mean) + (f" [{fmt(iv[0])}, {fmt(iv[1])}]" if iv else "")


def _details(r: dict) -> list[tuple[str, str]]:
    """The (term, text) pairs of a claim's ``<details>``, after its statement."""
    out = [("paper", r["paper"]), ("where", r["where"]), ("metric", r["metric"])]
    if r.get("why"):
        out.append((r["fidelity"], r["why"]))
    if (r.get("note") or "").strip():
        out.append(("note", r["note"].strip()))
    ctx = "; ".join(f"{k} = {fmt(x)}" for k, x in (r.get("context") or {}).items())
    if ctx:
        out.append(("measured beside it", ctx))
    if is_v1(r):
        out.append(("seeds", "1 seed (a ledger row of claims contract v1)"))
        return out + ([("registered", str(r["registered"]))] if r.get("registered") else [])
    seeds = r.get("seeds") or [s for s, _ in _seed_values(r.get("per_seed"))]
    out.append(("seeds", f"n = {fmt(r.get('n', len(seeds)))}" + (f" (seeds {', '.join(map(str, seeds))})"
                                                                 if seeds else "")))
    out.append(("rule", str(r.get("rule") or "—")))
    out.append(("mean and 90 % interval", _iv_text(r.get("mean"), r.get("interval"))))
    eff = r.get("effect")
    if isinstance(eff, dict):
        out.append(("effect", f"d_z = {fmt(eff.get('d_z'))}, P(A > B) = {fmt(eff.get('p_greater'))}"))
    ctl = r.get("control")
    if isinstance(ctl, dict):
        out.append(("control", f"{ctl.get('metric', '—')}: {ctl.get('verdict', '—')}; mean and 90 % interval "
                               f"{_iv_text(ctl.get('mean'), ctl.get('interval'))}"))
    else:
        out.append(("no control", str(r.get("why_no_control") or "—")))
    out.append(("registered", str(r.get("registered") or "—")))
    return out


def _revisions(r: dict) -> list[dict]:
    return [{k: str(v.get(k) or "—") for k in ("date", "change", "why")}
            for v in (r.get("revisions") or []) if isinstance(v, dict)]


def claim_view(r: dict, pv: dict | None = None) -> dict:
    """A row's cells as plain strings and numbers (what templates/claims.html.j2 reads); ``pv``:
    what computed it (:func:`provenance`), shown first in its details."""
    v = verdict_of(r)
    ctl = r.get("control") if isinstance(r.get("control"), dict) else None
    return {"study": r["study"], "id": r["id"], "statement": r["statement"], "level": r["level"],
            "fidelity": r["fidelity"], "verdict": v, "cls": css_class(v), "measured": fmt(r["measured"]),
            "check": check_text(r), "v1": is_v1(r), "strip": strip(r), "metric": r["metric"],
            "summary": f"{r['metric']}: {len(_seed_values(r.get('per_seed')))} seed(s), mean and 90 % "
                       f"interval {_iv_text(r.get('mean'), r.get('interval'))}",
            "control": None if ctl is None else {
                "metric": str(ctl.get("metric", "—")), "verdict": str(ctl.get("verdict", "—")),
                "cls": css_class(str(ctl.get("verdict", ""))),
                "summary": f"control {ctl.get('metric', '—')}: {ctl.get('verdict', '—')}, mean and 90 % "
                           f"interval {_iv_text(ctl.get('mean'), ctl.get('interval'))}"},
            "details": [("computed by", provenance_text(pv)), *_details(r)], "revisions": _revisions(r)}


def _profile_of(study: str, runs: dict, profile: str) -> str:
    """The profile whose record names ``study``'s runs: the page's own, else the default's."""
    return profile if study in runs.get(profile, {}).get("studies", {}) else "default"


def _no_run(rec: dict) -> dict[str, str]:
    """{stage: why it has no run} of a study's record (a record older than ``no_run`` listed
    ``missing`` stages without a reason)."""
    return dict(rec.get("no_run") or {m: "no run recorded, no reason given" for m in rec.get("missing", [])})


def store_note(runs: dict, profile: str) -> str:
    """The plain statement, at the run ids, of where the store that holds them is. The same on
    every machine (the committed page must not depend on the one that builds it): whether this
    checkout's store holds them is said at run time by ``python -m stages.ledger.runs --check``."""
    rec = runs.get(profile) or runs.get("default") or {}
    store = rec.get("store") or {}
    hosts = ", ".join(store.get("hosts") or []) or "not recorded"
    days = sorted(store.get("days") or [])
    when = (days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}") if days else "day not recorded"
    commit = (rec.get("commit") or "")[:10] or "unknown"
    return (f"These run ids name runs in the MLflow store of the machine that ran them (host {hosts}, "
            f"{when}; recorded in stages/ledger/runs.json at commit {commit}). That store (mlruns.db) "
            "is not in git: a clone has no copy of it, and the ids point nowhere there. "
            "`python -m stages.ledger.runs --check` says whether this checkout's store holds them; "
            "run `dvc repro` to make your own, or point MLFLOW_TRACKING_URI at a shared server.")


def _run_of(name: str, runs: dict, profile: str) -> dict | None:
    for s in runs.get(profile, {}).get("studies", {}).values():
        if name in s.get("stages", {}):
            return s["stages"][name]
    return None


def _why_no_run(name: str, runs: dict, profile: str) -> str:
    for s in runs.get(profile, {}).get("studies", {}).values():
        if name in _no_run(s):
            return _no_run(s)[name]
    return "not in stages/ledger/runs.json (run `python -m stages.ledger.runs`)"


def provenance(study: str, runs: dict, profile: str, md5_now: str | None = None) -> dict | None:
    """What computed a study's claims, from runs.json: the metrics file they read, the stage that
    wrote it and that file's md5 in the stage's dvc.lock entry, the stage's MLflow run (or why it
    has none), and every stage upstream of it with its run; ``stale`` when ``md5_now`` (the
    file as the ledger read it) differs from that md5 (runs.json predates the file). None when
    runs.json has no record of it."""
    prof = _profile_of(study, runs, profile)
    c = runs.get(prof, {}).get("studies", {}).get(study, {}).get("claims")
    if not c or not c.get("stage"):
        return None

    def one(name: str) -> dict:
        r = _run_of(name, runs, prof)
        return ({"stage": name, "run_id": r["run_id"], "host": r.get("host", "unknown"),
                 "day": r.get("day", "unknown"), "exact": r.get("exact", True), "why": ""} if r else
                {"stage": name, "run_id": None, "host": "", "day": "", "exact": False,
                 "why": _why_no_run(name, runs, prof)})

    return {"profile": prof, "metrics": c["metrics"], "stage": c["stage"], "md5": c.get("md5", ""),
            "lock_path": c.get("lock_path") or c["metrics"], "run": one(c["stage"]),
            "upstream": [one(n) for n in c.get("computed_by", []) if n != c["stage"]],
            "stale": bool(md5_now and c.get("md5") and md5_now != c["md5"]), "md5_now": md5_now or ""}


def provenance_text(pv: dict | None) -> str:
    """A claim's "computed by", as one line of text (the page's details, claims.md)."""
    if pv is None:
        return "not recorded: stages/ledger/runs.json has no record of this study's metrics file"
    r = pv["run"]
    run = (f"MLflow run {r['run_id']} (host {r['host']}, {r['day']})" if r["run_id"]
           else f"no MLflow run: {r['why']}")
    text = f"stage {pv['stage']} (dvc.lock: {pv['lock_path']} md5 {pv['md5'] or 'none'}), {run}"
    if pv["stale"]:
        text += (f"; STALE: the metrics file the ledger read has md5 {pv['md5_now']}, not the one "
                 "runs.json recorded (run `python -m stages.ledger.runs`)")
    return text


def _runs_view(study: str, runs: dict, profile: str) -> dict | None:
    """The MLflow runs behind a study's outputs, and the stages without one (each with why), or
    None when runs.json has no record of the study."""
    rec_profile = _profile_of(study, runs, profile)
    rec = runs.get(rec_profile, {}).get("studies", {}).get(study)
    if not rec or not (rec["stages"] or _no_run(rec)):
        return None
    return {"profile": rec_profile, "commit": runs[rec_profile].get("commit", "")[:10],
            "stages": [{"name": n, **r} for n, r in sorted(rec["stages"].items())],
            "no_run": sorted(_no_run(rec).items())}


def to_html(rows: list[dict], profile: str, title: str, papers: dict, runs: dict,
            plots: dict[str, list[dict]], md5_now: dict[str, str] | None = None) -> str:
    """The page; ``plots[study]`` lists {name, thumb, full, w, h} with paths relative to it;
    ``md5_now[study]``: the md5 of the metrics file the ledger read (to flag a stale runs.json)."""
    ov = overview(rows, papers, runs)
    studies = []
    for o in ov:
        pv = provenance(o["study"], runs, profile, (md5_now or {}).get(o["study"]))
        studies.append({**o, "worst_cls": css_class(o["worst"]),
                        "source": next(r["source"] for r in rows if r["study"] == o["study"]),
                        "claims": [claim_view(r, pv) for r in rows if r["study"] == o["study"]],
                        "plots": plots.get(o["study"], []), "runs": _runs_view(o["study"], runs, profile),
                        "provenance": pv})
    verdicts = [(css_class(v), v) for v in VERDICTS]
    return _render("index.html.j2", title=title, profile=profile, totals=_total_groups(rows, ov),
                   verdicts=verdicts, not_failing=[css_class(v) for v in NOT_FAILING], studies=studies,
                   store_note=store_note(runs, profile))


def diff_page(payload: dict) -> str:
    """The small page ``claimbench diff --page`` writes: it hands ``payload`` to the ledger page."""
    return _render("diff.html.j2", data={"kind": "claimbench-diff", **payload})
