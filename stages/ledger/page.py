"""The ledger page, ``reports/index.html``: what a researcher opens first.

Layout, top to bottom: the totals; the changes since the last committed ledger (see below); the
filters; the overview (one row per study: its paper's title, seed file and position, must and
should claims held out of all, fidelity labels, default-profile compute time, links to its
section and its README); then one section per study: its claims (statement first, the paper's
figure, where, note and context folded in a ``<details>``), its plots, and the MLflow runs that
made them.

Filters by verdict (holds / fails / not run), level and fidelity, and a text search, in plain
inline JS: no CDN, no web fonts, nothing fetched. One button shows only the failing claims.

Size budget: the HTML itself ≤ 1 MB at 15 studies (so ≤ ~2.5 MB at 38): no plot is embedded.
Each plot is a WebP thumbnail (≤ ``THUMB_W`` px wide) beside the page in
``reports/ledger/thumbs/<study>/``, loaded lazily (``loading="lazy"``) and linking to the full
PNG in ``reports/<study>/``. tests/ledger checks the budget on the page it builds.

The comparison with the last committed ledger is not computed here: this is a DVC stage, and
git's HEAD is not one of its deps (reading it would make the page depend on something DVC does
not track, and ``dvc repro`` would no longer be honest). ``claimbench diff --page`` (outside
DVC) writes ``reports/claims-diff.html`` (git-ignored); the page loads it in a hidden iframe,
which hands the comparison over with ``postMessage``. Without that file the page says how to
make it (a missing iframe target logs no console error; a missing script would).
"""
from __future__ import annotations

import html
import json

from .format import check_text, fmt, verdict

THUMB_W = 480
DIFF_PAGE = "claims-diff.html"
VERDICT_CLASS = {True: "holds", False: "fails", None: "notrun"}

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:1em 1.5em;max-width:1360px;color:#222;line-height:1.35}
h1{margin:.2em 0}h2{margin:1.4em 0 .3em;border-bottom:2px solid #ddd}
section.study,#overview{scroll-margin-top:3.2em}
table{border-collapse:collapse;width:100%;table-layout:fixed;font-size:.9em}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;overflow-wrap:anywhere;text-align:left}
th{background:#f3f3f3}
tr.holds td.v{background:#dff3df}tr.fails td.v{background:#f8d9d9}tr.notrun td.v{background:#eee}
td.num{text-align:right;white-space:nowrap}
.totals{display:flex;flex-wrap:wrap;gap:.6em;margin:.6em 0}
.totals div{border:1px solid #ccc;border-radius:6px;padding:.35em .8em;background:#fafafa}
.totals b{font-size:1.25em}
.filters{position:sticky;top:0;background:#fff;border-bottom:1px solid #ccc;padding:.5em 0;z-index:2;display:flex;flex-wrap:wrap;gap:1em;align-items:center}
.filters input[type=search]{width:18em}
button{cursor:pointer}
details summary{cursor:pointer}
details dl{margin:.3em 0}details dt{font-weight:600}details dd{margin:0 0 .3em 1em}
.plots{display:flex;flex-wrap:wrap;gap:.8em}
.plots figure{margin:0;width:240px}
.plots img{width:100%;height:auto;border:1px solid #ddd;background:#fff}
.plots figcaption{font-size:.8em;overflow-wrap:anywhere}
.runs{font-size:.85em}.runs code{font-size:.95em}
.muted{color:#666}
#diff table{margin-bottom:.5em}
tr.changed td:first-child{box-shadow:inset 4px 0 #e69500}
"""

JS = r"""
(function(){
  var claims=[].slice.call(document.querySelectorAll('tr.claim'));
  var text=claims.map(function(r){return r.textContent.toLowerCase();});
  var sections=[].slice.call(document.querySelectorAll('section.study'));
  var overview=[].slice.call(document.querySelectorAll('tr.ov'));
  var q=document.getElementById('q'), lvl=document.getElementById('f-level'),
      fid=document.getElementById('f-fidelity'), count=document.getElementById('count');
  var boxes=[].slice.call(document.querySelectorAll('input[name=verdict]'));
  function apply(){
    var want={}; boxes.forEach(function(b){want[b.value]=b.checked;});
    var s=q.value.trim().toLowerCase(), per={}, n=0;
    claims.forEach(function(r,i){
      var d=r.dataset, ok=want[d.verdict] && (!lvl.value||d.level===lvl.value) &&
        (!fid.value||d.fidelity===fid.value) && (!s||text[i].indexOf(s)>=0);
      r.hidden=!ok; if(ok){n++; per[d.study]=(per[d.study]||0)+1;}
    });
    sections.forEach(function(x){x.hidden=!per[x.dataset.study];});
    overview.forEach(function(x){x.hidden=!per[x.dataset.study];});
    count.textContent=n+' of '+claims.length+' claims shown';
  }
  boxes.concat([lvl,fid]).forEach(function(e){e.addEventListener('change',apply);});
  q.addEventListener('input',apply);
  document.getElementById('only-fails').addEventListener('click',function(){
    boxes.forEach(function(b){b.checked=(b.value==='fails');}); lvl.value=''; fid.value=''; q.value=''; apply();});
  document.getElementById('show-all').addEventListener('click',function(){
    boxes.forEach(function(b){b.checked=true;}); lvl.value=''; fid.value=''; q.value=''; apply();});
  apply();
  window.addEventListener('message',function(ev){
    var d=ev.data; if(!d||d.kind!=='claimbench-diff') return;
    var box=document.getElementById('diff');
    var h='<p>Against the ledger of <code>'+esc(d.rev)+'</code>: '+d.changes.length+' claim(s) changed'+
      (d.must_broke?', <b>'+d.must_broke+' must claim(s) went from holds to fails</b>':'')+'.</p>';
    if(d.changes.length){
      h+='<table><tr><th style="width:28%">claim</th><th>change</th><th>verdict</th><th>measured</th></tr>';
      d.changes.forEach(function(c){
        h+='<tr><td>'+esc(c.key)+'</td><td>'+esc(c.change)+'</td><td>'+esc(c.old_verdict+' → '+c.new_verdict)+
          '</td><td>'+esc(c.old_measured+' → '+c.new_measured)+'</td></tr>';
        var row=document.getElementById('claim-'+c.key.replace('/','--')); if(row) row.classList.add('changed');
      });
      h+='</table>';
    }
    box.innerHTML=h;
  });
  function esc(s){return String(s).replace(/[&<>"]/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
})();
"""


def e(x) -> str:
    return html.escape(str(x), quote=True)


def held(rows: list[dict], level: str) -> tuple[int, int, int]:
    """(held, all, not run) among ``rows`` of ``level``."""
    of = [r for r in rows if r["level"] == level]
    return sum(r["holds"] is True for r in of), len(of), sum(r["holds"] is None for r in of)


def held_text(rows: list[dict], level: str, sep: str = " / ") -> str:
    """'held / all', and how many were not run; '—' when the level has no claim."""
    h, n, nr = held(rows, level)
    if not n:
        return "—"
    return f"{h}{sep}{n}" + (f" ({nr} not run)" if nr else "")


def overview(rows: list[dict], papers: dict, runs: dict) -> list[dict]:
    """One dict per study: the overview's cells as plain values (the Markdown table uses them too)."""
    seeds = papers.get("seeds", {})
    out = []
    for study in sorted({r["study"] for r in rows}):
        mine = [r for r in rows if r["study"] == study]
        p = papers.get("papers", {}).get(study)
        rec = runs.get("default", {}).get("studies", {}).get(study)
        out.append({
            "study": study,
            "title": p["title"] if p else mine[0]["source"],
            "seed": f"{seeds.get(p['seed'], p['seed'])}, #{p['position']}" if p else "—",
            "must": held_text(mine, "must"), "should": held_text(mine, "should"),
            "fidelity": ", ".join(sorted({r["fidelity"] for r in mine})),
            "compute_s": rec["compute_s"] if rec and rec["stages"] else None,
            "fails": sum(r["holds"] is False for r in mine),
        })
    return out


def compute_text(s) -> str:
    if s is None:
        return "—"
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def totals(rows: list[dict], ov: list[dict]) -> list[tuple[str, str]]:
    mh, mn, _ = held(rows, "must")
    sh, sn, _ = held(rows, "should")
    total_s = sum(o["compute_s"] or 0 for o in ov)
    return [("studies", str(len(ov))),
            ("claims hold", f"{sum(r['holds'] is True for r in rows)} / {len(rows)}"),
            ("must hold", f"{mh} / {mn}"), ("should hold", f"{sh} / {sn}"),
            ("fail", str(sum(r["holds"] is False for r in rows))),
            ("not run", str(sum(r["holds"] is None for r in rows))),
            ("default compute", compute_text(total_s) if total_s else "—")]


def claim_row(r: dict) -> str:
    v = verdict(r["holds"])
    ctx = "; ".join(f"{k} = {fmt(x)}" for k, x in r.get("context", {}).items())
    details = [("paper", r["paper"]), ("where", r["where"]), ("metric", r["metric"])]
    if r.get("why"):
        details.append((r["fidelity"], r["why"]))
    if r.get("note", "").strip():
        details.append(("note", r["note"].strip()))
    if ctx:
        details.append(("measured beside it", ctx))
    dl = "".join(f"<dt>{e(k)}</dt><dd>{e(x)}</dd>" for k, x in details)
    return (f"<tr class='claim {VERDICT_CLASS[r['holds']]}' id='claim-{e(r['study'])}--{e(r['id'])}' "
            f"data-study='{e(r['study'])}' data-verdict='{e(v.replace(' ', ''))}' data-level='{e(r['level'])}' "
            f"data-fidelity='{e(r['fidelity'])}'>"
            f"<td><b>{e(r['id'])}</b><details><summary>{e(r['statement'])}</summary><dl>{dl}</dl></details></td>"
            f"<td>{e(r['level'])}</td><td class='num'>{e(fmt(r['measured']))}</td>"
            f"<td><code>{e(check_text(r))}</code></td><td class='v'>{e(v)}</td><td>{e(r['fidelity'])}</td></tr>")


def runs_block(study: str, runs: dict, profile: str) -> str:
    rec_profile = profile if study in runs.get(profile, {}).get("studies", {}) else "default"
    rec = runs.get(rec_profile, {}).get("studies", {}).get(study)
    if not rec or not rec["stages"]:
        return ("<p class='runs muted'>MLflow runs: none recorded for this study "
                "(<code>python -m stages.ledger.runs</code> records them after a run).</p>")
    items = []
    for name, r in sorted(rec["stages"].items()):
        mark = "" if r["exact"] else (" <span class='muted' title='this run saw inputs that differ from "
                                      "dvc.lock (it ran before an edit DVC recorded without re-running)'>≈</span>")
        items.append(f"<li>{e(name)}: <code>{e(r['run_id'])}</code>{mark} "
                     f"<span class='muted'>({e(r['experiment'])}, {compute_text(r['compute_s'])})</span></li>")
    missing = "".join(f"<li>{e(m)}: <span class='muted'>no run recorded</span></li>" for m in rec["missing"])
    commit = runs[rec_profile].get("commit", "")[:10]
    return (f"<div class='runs'>MLflow runs that made these outputs (profile {e(rec_profile)}, "
            f"recorded at commit <code>{e(commit)}</code>):<ul>{''.join(items)}{missing}</ul></div>")


def plots_block(plots: list[dict]) -> str:
    if not plots:
        return "<p class='muted'>No plots.</p>"
    figs = [f"<figure><a href='{e(p['full'])}'><img loading='lazy' src='{e(p['thumb'])}' width='{p['w']}' "
            f"height='{p['h']}' alt='{e(p['name'])}'></a><figcaption>{e(p['name'])}</figcaption></figure>"
            for p in plots]
    return "<div class='plots'>" + "".join(figs) + "</div>"


def to_html(rows: list[dict], profile: str, title: str, papers: dict, runs: dict,
            plots: dict[str, list[dict]]) -> str:
    """The page; ``plots[study]`` lists {name, thumb, full, w, h} with paths relative to it."""
    ov = overview(rows, papers, runs)
    out = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
           f"<meta name='viewport' content='width=device-width,initial-scale=1'><title>{e(title)}</title>"
           f"<style>{CSS}</style></head><body>",
           f"<h1>{e(title)}</h1>",
           f"<p>Profile <code>{e(profile)}</code>. Every measured figure comes from this repository's "
           f"pipeline (<code>dvc repro</code>); <i>fidelity</i> says how close the experiment is to the paper's. "
           f"Compute time: the default profile's stage runs (MLflow <code>stage.compute_s</code>, "
           f"<code>stages/ledger/runs.json</code>).</p>",
           "<div class='totals'>" + "".join(f"<div><b>{e(v)}</b> {e(k)}</div>" for k, v in totals(rows, ov)) + "</div>",
           f"<h2>Changes since the last committed ledger</h2><div id='diff'><p class='muted'>No comparison "
           f"loaded: <code>claimbench diff --page</code> compares this ledger with git HEAD's and writes "
           f"<code>reports/{DIFF_PAGE}</code>, which this page then shows here.</p></div>",
           "<div class='filters'><span>verdict: " + "".join(
               f"<label><input type='checkbox' name='verdict' value='{v}' checked> {lab}</label> "
               for v, lab in (("holds", "holds"), ("fails", "fails"), ("notrun", "not run"))) + "</span>"
           "<label>level <select id='f-level'><option value=''>all</option><option>must</option>"
           "<option>should</option></select></label>"
           "<label>fidelity <select id='f-fidelity'><option value=''>all</option><option>faithful</option>"
           "<option>proxy</option><option>stand-in</option></select></label>"
           "<input type='search' id='q' placeholder='search claims, papers, notes'>"
           "<button id='only-fails' type='button'>only failing claims</button>"
           "<button id='show-all' type='button'>show all</button>"
           "<span id='count' class='muted'></span></div>",
           "<h2 id='overview'>Overview</h2><table id='overview-table'><colgroup><col style='width:12%'>"
           "<col style='width:38%'><col style='width:9%'><col style='width:9%'><col style='width:12%'>"
           "<col style='width:9%'><col style='width:11%'></colgroup>"
           "<tr><th>study</th><th>paper (seed file, position)</th><th>must held</th><th>should held</th>"
           "<th>fidelity</th><th>default compute</th><th>links</th></tr>"]
    for o in ov:
        s = o["study"]
        cls = " fails" if o["fails"] else ""
        out.append(f"<tr class='ov{cls}' data-study='{e(s)}'><td><a href='#study-{e(s)}'>{e(s)}</a></td>"
                   f"<td>{e(o['title'])} <span class='muted'>({e(o['seed'])})</span></td>"
                   f"<td class='num'>{e(o['must'])}</td><td class='num'>{e(o['should'])}</td>"
                   f"<td>{e(o['fidelity'])}</td><td class='num'>{e(compute_text(o['compute_s']))}</td>"
                   f"<td><a href='#study-{e(s)}'>section</a> · <a href='../stages/{e(s)}/README.md'>README</a></td></tr>")
    out.append("</table>")
    for o in ov:
        s = o["study"]
        mine = [r for r in rows if r["study"] == s]
        out.append(f"<section class='study' id='study-{e(s)}' data-study='{e(s)}'><h2>{e(s)}</h2>"
                   f"<p>{e(mine[0]['source'])} · <a href='../stages/{e(s)}/README.md'>README</a> · "
                   f"<a href='#overview'>overview</a></p>"
                   "<table><colgroup><col style='width:46%'><col style='width:7%'><col style='width:11%'>"
                   "<col style='width:20%'><col style='width:7%'><col style='width:9%'></colgroup>"
                   "<tr><th>claim (click to unfold the paper's figure and the note)</th><th>level</th>"
                   "<th>measured</th><th>check</th><th>verdict</th><th>fidelity</th></tr>"
                   + "".join(claim_row(r) for r in mine) + "</table>"
                   + plots_block(plots.get(s, [])) + runs_block(s, runs, profile) + "</section>")
    # the iframe after the script: its message cannot arrive before the listener exists
    out.append(f"<script>{JS}</script><iframe src='{DIFF_PAGE}' hidden title='comparison'></iframe></body></html>")
    return "\n".join(out) + "\n"


def diff_page(payload: dict) -> str:
    """The small page ``claimbench diff --page`` writes: it hands ``payload`` to the ledger page."""
    data = json.dumps({"kind": "claimbench-diff", **payload}).replace("</", "<\\/")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>claims diff</title></head><body>"
            f"<script>parent.postMessage({data}, '*');</script></body></html>\n")
