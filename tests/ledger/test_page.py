"""The ledger page and claims.md's overview, built from tiny fake rows (no pipeline), and the
records the ledger reads beside the claims (papers.yaml, runs.json)."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from stages.ledger.build import make_thumbs, to_markdown
from stages.ledger.page import diff_page, overview, strip, totals, to_html

REPO = Path(__file__).resolve().parents[2]
BUDGET_15 = 1_000_000          # bytes of HTML at 15 studies (page.py's size budget)
THUMBS_15 = 3_000_000          # bytes of plot thumbnails at 15 studies, loaded lazily


def _row(study, cid, level, holds, fidelity="faithful", measured=0.5):
    return {"study": study, "id": cid, "level": level, "holds": holds, "fidelity": fidelity,
            "why": "" if fidelity == "faithful" else "smaller data", "measured": measured,
            "metric": "a.b", "op": ">=", "threshold": 0.4, "statement": f"claim {cid} of {study}",
            "paper": "0.9 in the paper", "where": "Fig. 1", "note": "a <b>note</b>", "context": {"a.c": 1.5},
            "source": f"Author, Paper of {study} (NeurIPS 2025)", "profile": "smoke"}


ROWS = [_row("beta", "m1", "must", True), _row("beta", "m2", "must", False),
        _row("beta", "s1", "should", None, "proxy", None), _row("alpha", "m1", "must", True, "stand-in")]


def v2_row(study, cid, verdict, level="must", n=5, op=">=", threshold=0.4, control=True, **extra):
    """A row of claims contract v2: ``n`` seeds around 0.5, and a control arm around 0.3."""
    per_seed = {str(s): round(0.5 + 0.02 * (s - n // 2), 4) for s in range(n)}
    mean = sum(per_seed.values()) / n
    row = {**_row(study, cid, level, None, measured=mean), "op": op, "threshold": threshold,
           "verdict": verdict, "contract": 2, "n": n, "seeds": list(range(n)), "per_seed": per_seed,
           "mean": mean, "interval": [mean - 0.03, mean + 0.03], "rule": "interval",
           "control": None, "why_no_control": "a property, not a comparison", "effect": None,
           "registered": "2026-01-05", "revisions": []}
    del row["holds"]
    if control:
        ctl = {str(s): round(0.3 + 0.01 * s, 4) for s in range(n)}
        row.update(control={"metric": "a.blind", "per_seed": ctl, "mean": sum(ctl.values()) / n,
                            "interval": [0.29, 0.33], "verdict": "fails"},
                   why_no_control="", effect={"d_z": 2.5, "p_greater": 1.0})
    return {**row, **extra}


V2_ROWS = [v2_row("gamma", "g1", "holds"), v2_row("gamma", "g2", "fails", control=False, n=10),
           v2_row("gamma", "g3", "inconclusive", op="between", threshold=[0.45, 0.6]),
           v2_row("delta", "d1", "not specific"), v2_row("delta", "d2", "holds", control=False),
           v2_row("delta", "d3", "retired", control=False),
           v2_row("delta", "s1", "holds", level="should"),
           v2_row("eps", "e1", "not run", per_seed=None, mean=None, interval=None, control=None),
           _row("zeta", "old", "must", True)]
PAPERS = {"papers": {"alpha": {"title": "Alpha Paper", "venue": "NeurIPS 2025", "arxiv": "2501.01234"}}}
RUNS = {"default": {"commit": "abc", "store": {"hosts": ["box7"], "days": ["2026-12-01", "2026-12-02"], "read": ["mlruns.db"]},
        "studies": {"beta": {"compute_s": 130.0, "no_run": {"beta-evaluate": "made in another checkout"},
                             "stages": {"beta-train": {"run_id": "r123", "experiment": "beta", "exact": False,
                                                       "compute_s": 130.0, "host": "box7", "day": "2026-12-01"}},
                             "claims": {"metrics": "reports/beta/metrics.json", "stage": "beta-evaluate",
                                        "lock_path": "reports/beta/metrics.json", "md5": "f" * 32,
                                        "computed_by": ["beta-evaluate", "beta-train"]}}}}}
PLOTS = {"beta": [{"name": "curve.png", "thumb": "ledger/thumbs/beta/curve.webp", "full": "beta/curve.png",
                   "w": 480, "h": 300}]}


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _parse(page: str) -> list[tuple[str, dict]]:
    p = _Collect()
    p.feed(page)
    return p.tags


def test_overview_rows_counts_and_paper():
    ov = {o["study"]: o for o in overview(ROWS, PAPERS, RUNS)}
    assert list(ov) == ["alpha", "beta"]
    assert ov["alpha"]["title"] == "Alpha Paper" and ov["alpha"]["venue"] == "NeurIPS 2025"
    assert ov["alpha"]["link"] == {"href": "https://arxiv.org/abs/2501.01234", "label": "arXiv 2501.01234"}
    assert ov["beta"]["title"] == "Author, Paper of beta (NeurIPS 2025)" and ov["beta"]["link"] is None
    assert ov["beta"]["must"] == "1 / 2" and ov["beta"]["should"] == "0 / 1 (1 not run)"
    assert ov["alpha"]["should"] == "—" and ov["beta"]["fidelity"] == "faithful, proxy"
    assert ov["beta"]["compute_s"] == 130.0 and ov["alpha"]["compute_s"] is None


def test_page_structure_filters_and_links():
    page = to_html(ROWS, "smoke", "T <ledger>", PAPERS, RUNS, PLOTS)
    tags = _parse(page)
    claims = [a for t, a in tags if t == "tr" and "claim" in a.get("class", "").split()]
    assert [(a["data-study"], a["data-verdict"], a["data-level"], a["data-fidelity"]) for a in claims] == [
        ("alpha", "holds", "must", "stand-in"), ("beta", "holds", "must", "faithful"),
        ("beta", "fails", "must", "faithful"), ("beta", "notrun", "should", "proxy")]
    assert [a["data-study"] for t, a in tags if t == "tr" and "ov" in a.get("class", "").split()] == ["alpha", "beta"]
    assert [a["id"] for t, a in tags if t == "section"] == ["study-alpha", "study-beta"]
    hrefs = [a["href"] for t, a in tags if t == "a"]
    assert "#study-beta" in hrefs and "../stages/beta/README.md" in hrefs and "beta/curve.png" in hrefs
    (img,) = [a for t, a in tags if t == "img"]
    assert img["loading"] == "lazy" and img["src"] == "ledger/thumbs/beta/curve.webp"
    assert [a["value"] for t, a in tags if t == "input" and a.get("name") == "verdict"] == [
        "holds", "fails", "inconclusive", "notspecific", "notrun", "retired"]
    assert "<title>T &lt;ledger&gt;</title>" in page and "a &lt;b&gt;note&lt;/b&gt;" in page   # escaped
    assert "r123" in page and "≈" in page and "host box7, 2026-12-01" in page                 # runs block
    assert "beta-evaluate: <b>no run</b>: made in another checkout" in page                   # said why
    assert "https://arxiv.org/abs/2501.01234" in hrefs and "no arXiv id" in page               # paper links
    assert "<details><summary>claim m1 of beta</summary>" in page


def test_page_requests_nothing_off_the_machine():
    page = to_html(ROWS, "smoke", "T", PAPERS, RUNS, PLOTS)
    srcs = [a.get("src") or a.get("href") for t, a in _parse(page) if t in ("img", "script", "link", "iframe")]
    assert all(s is None or not re.match(r"^(https?:)?//", s) for s in srcs), srcs
    assert "@import" not in page and "url(" not in page and "font-face" not in page


def test_page_size_budget_at_15_studies():
    """The HTML of 15 studies of 8 claims with 6 plots each stays within the budget (plots are files)."""
    rows = [_row(f"study_{i:02d}", f"c{j}", "must", j % 3 == 0) for i in range(15) for j in range(8)]
    for r in rows:
        r["note"] = "x" * 600
    plots = {f"study_{i:02d}": PLOTS["beta"] * 6 for i in range(15)}
    page = to_html(rows, "default", "T", PAPERS, RUNS, plots)
    assert "data:image" not in page and len(page.encode()) < BUDGET_15


def test_the_committed_ledger_page_keeps_its_budget():
    """reports/index.html of the committed default run, and its thumbnails, within the budget."""
    page = REPO / "reports/index.html"
    thumbs = sum(f.stat().st_size for f in (REPO / "reports/ledger").rglob("*") if f.is_file())
    n = len({r["study"] for r in json.loads((REPO / "reports/claims.json").read_text())})
    assert page.stat().st_size <= BUDGET_15 * n / 15, page.stat().st_size
    assert 0 < thumbs <= THUMBS_15 * n / 15, thumbs


def test_claims_md_starts_with_the_overview():
    md = to_markdown(ROWS, "smoke", PAPERS, RUNS)
    lines = md.splitlines()
    i = lines.index("## Studies")
    assert lines[i + 2].startswith("| study | paper (venue, link) | must held |")
    assert lines[i + 4] == ("| [alpha](../stages/alpha/README.md) | Alpha Paper (NeurIPS 2025, "
                            "[arXiv 2501.01234](https://arxiv.org/abs/2501.01234)) | 1 / 1 | — | stand-in | — |")
    assert lines[i + 5].startswith("| [beta](../stages/beta/README.md) | Author, Paper of beta (NeurIPS 2025) (no arXiv id) |")
    assert lines[i + 5].endswith("| 1 / 2 | 0 / 1 (1 not run) | faithful, proxy | 2.2 min |")
    assert lines.index("## Claims") > i + 5


def test_thumbnails_are_small_webp_beside_the_page(tmp_path):
    from PIL import Image

    (tmp_path / "reports/beta/sub").mkdir(parents=True)
    Image.new("RGB", (1600, 1000), (200, 30, 30)).save(tmp_path / "reports/beta/big.png")
    Image.new("RGB", (100, 50), (0, 0, 255)).save(tmp_path / "reports/beta/sub/small.png")
    plots = make_thumbs(tmp_path, ["beta", "empty"])
    assert [(p["name"], p["w"], p["h"], p["thumb"], p["full"]) for p in plots["beta"]] == [
        ("big.png", 480, 300, "ledger/thumbs/beta/big.webp", "beta/big.png"),
        ("sub/small.png", 100, 50, "ledger/thumbs/beta/sub/small.webp", "beta/sub/small.png")]
    with Image.open(tmp_path / "reports/ledger/thumbs/beta/big.webp") as im:
        assert im.format == "WEBP" and im.size == (480, 300)
    assert "empty" not in plots


def _strip_svg(page: str, study: str, cid: str) -> str:
    row = page[page.index(f'id="claim-{study}--{cid}"'):]
    row = row[:row.index("</tr>")]
    return row[row.index("<svg"):row.index("</svg>")] if "<svg" in row else ""


def test_seed_strip_draws_every_seed_the_threshold_and_the_control():
    page = to_html(V2_ROWS, "default", "T", PAPERS, RUNS, {})
    g1 = _strip_svg(page, "gamma", "g1")
    own, ctl = g1.split('<g class="ctl">')
    assert own.count('<circle class="d"') == 5 and ctl.count('<circle class="d"') == 5      # one dot per seed
    assert g1.count('<line class="thr"') == 1 and g1.count('<line class="mean"') == 2       # threshold, means
    assert g1.count('<rect class="iv"') == 2 and "control a.blind: fails" in ctl             # intervals; control
    assert "seed 4: 0.54" in own and "seed 0: 0.3" in ctl
    g2 = _strip_svg(page, "gamma", "g2")
    assert g2.count('<circle class="d"') == 10 and '<g class="ctl">' not in g2               # no control: one row
    assert _strip_svg(page, "gamma", "g3").count('<line class="thr"') == 2                    # between: two lines
    assert _strip_svg(page, "eps", "e1") == "" and _strip_svg(page, "zeta", "old") == ""      # no per-seed values
    v1 = page[page.index('id="claim-zeta--old"'):]
    assert "1 seed" in v1[:v1.index("</tr>")]
    # each strip is scaled to its own values: every mark lies inside it
    s = strip(V2_ROWS[2])
    xs = [d["x"] for r in s["rows"] for d in r["dots"]] + [t["x"] for t in s["thresholds"]]
    assert min(xs) >= 0 and max(xs) <= s["w"] and len(s["rows"]) == 2
    flat = strip({**V2_ROWS[4], "per_seed": {"0": 1.0, "1": 1.0}, "interval": [1.0, 1.0], "mean": 1.0,
                  "threshold": 1.0})                                   # zero spread: still inside
    assert all(0 <= d["x"] <= flat["w"] for d in flat["rows"][0]["dots"])


def test_claim_details_name_the_contract_figures():
    page = to_html([v2_row("gamma", "g1", "holds", revisions=[
        {"date": "2026-02-01", "change": "threshold 0.4 -> 0.45", "why": "Table 2 of the paper"}]),
        v2_row("gamma", "g2", "holds", control=False)], "default", "T", PAPERS, RUNS, {})
    g1 = page[page.index('id="claim-gamma--g1"'):page.index('id="claim-gamma--g2"')]
    for text in ("<dt>seeds</dt><dd>n = 5 (seeds 0, 1, 2, 3, 4)</dd>", "<dt>rule</dt><dd>interval</dd>",
                 "<dt>mean and 90 % interval</dt><dd>0.5 [0.47, 0.53]</dd>",
                 "<dt>effect</dt><dd>d_z = 2.5, P(A &gt; B) = 1</dd>",
                 "<dt>control</dt><dd>a.blind: fails; mean and 90 % interval 0.32 [0.29, 0.33]</dd>",
                 "<dt>registered</dt><dd>2026-01-05</dd>",
                 "<li>2026-02-01: threshold 0.4 -&gt; 0.45 (Table 2 of the paper)</li>"):
        assert text in g1, text
    assert "<dt>no control</dt><dd>a property, not a comparison</dd>" in page[page.index('id="claim-gamma--g2"'):]


def test_totals_per_verdict_and_the_decisive_share():
    ov = overview(V2_ROWS, PAPERS, RUNS)
    got = dict(totals(V2_ROWS, ov))
    # v2 musts: g1 holds, g2 fails, g3 inconclusive, d1 not specific, d2 holds, d3 retired, e1 not run
    assert [got[v] for v in ("holds", "fails", "inconclusive", "not specific", "not run", "retired")] == [
        "2", "1", "1", "1", "1", "1"]
    assert got["decisive share"] == "50 %"               # (2 + 1) / 6 judged musts; retired left out
    assert got["holds (1 seed)"] == "1" and got["studies"] == "4"      # the v1 row is counted apart
    assert dict(totals(ROWS, overview(ROWS, PAPERS, RUNS)))["decisive share"] == "—"    # no v2 must
    page = to_html(V2_ROWS, "default", "T", PAPERS, RUNS, {})
    assert '<div class="box vb decisive"><b>50 %</b> decisive share</div>' in page
    worst = {a["data-study"]: a["class"] for t, a in _parse(page) if t == "tr" and "ov" in a.get("class", "").split()}
    assert worst == {"delta": "ov notspecific", "eps": "ov notrun", "gamma": "ov fails", "zeta": "ov holds"}
    (fails,) = [a for t, a in _parse(page) if a.get("id") == "only-fails"]
    assert fails["data-hide"] == "holds retired"


INJECT = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>"]


def test_every_field_is_escaped():
    """A claims.yaml or papers.yaml field is shown as text: no element, no script comes out of it."""
    rows = []
    for i, bad in enumerate(INJECT):
        rows.append(v2_row("gamma", f"g{i}{bad}", "holds", statement=bad, note=bad, paper=bad, source=bad,
                           why=bad, where=bad, registered=bad, why_no_control=bad, rule=bad,
                           revisions=[{"date": bad, "change": bad, "why": bad}],
                           control={"metric": bad, "verdict": bad, "per_seed": {"0": 0.1, bad: 0.2}}))
    page = to_html(rows, "smoke", "T", PAPERS, RUNS, {"gamma": [{**PLOTS["beta"][0], "name": INJECT[0]}]})
    tags = _parse(page)
    assert [t for t, _ in tags if t == "img"] == ["img"]          # the plot's thumbnail, no other
    assert [t for t, _ in tags].count("script") == 1 and page.count("</script>") == 1
    assert "<img src=x" not in page and "alert(2)</script>" not in page
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") >= 12
    assert "&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in page
    # the diff page: a <script> of its own, the payload a JSON value that cannot end it
    diff = diff_page({"rev": INJECT[1], "changes": [{"key": INJECT[1]}], "must_broke": INJECT[0]})
    assert diff.count("<script>") == 1 and diff.count("</script>") == 1 and "<img" not in diff
    data = json.loads(diff[diff.index("postMessage(") + len("postMessage("):diff.rindex(", '*')")])
    assert data == {"kind": "claimbench-diff", "rev": INJECT[1], "changes": [{"key": INJECT[1]}],
                    "must_broke": INJECT[0]}


def test_page_size_budget_at_15_studies_of_ten_seeds():
    """The budget holds for contract v2 rows too: 10 seeds and a control in every strip."""
    rows = [v2_row(f"study_{i:02d}", f"c{j}", "holds", n=10, note="x" * 600) for i in range(15) for j in range(8)]
    plots = {f"study_{i:02d}": PLOTS["beta"] * 6 for i in range(15)}
    assert len(to_html(rows, "paper", "T", PAPERS, RUNS, plots).encode()) < BUDGET_15
