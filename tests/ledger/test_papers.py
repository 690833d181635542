"""papers.yaml: each study's paper by title, venue and id (arXiv or OpenReview), each id one the
study itself names; the overview links it and points at no file outside the repository."""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from stages.ledger.build import load_papers, load_runs, to_markdown
from stages.ledger.page import overview, paper_link, to_html

REPO = Path(__file__).resolve().parents[2]
ARXIV = re.compile(r"\d{4}\.\d{4,5}")
OPENREVIEW = re.compile(r"[A-Za-z0-9_-]{8,12}")
VENUE = re.compile(r"(NeurIPS|ICML|ICLR) \d{4}( Datasets & Benchmarks)?|venue not given")


def _studies() -> dict[str, Path]:
    return {yaml.safe_load(f.read_text())["study"]: f.parent for f in (REPO / "stages").glob("*/claims.yaml")}


def test_every_study_has_a_paper_with_title_and_venue():
    papers = load_papers()
    assert set(papers) == {"papers"}, "papers.yaml holds the papers only (no seed files)"
    missing = set(_studies()) - set(papers["papers"])
    assert not missing, f"add these studies to stages/ledger/papers.yaml: {sorted(missing)}"
    for study, p in papers["papers"].items():
        assert set(p) <= {"title", "venue", "arxiv", "openreview"}, (study, sorted(p))
        assert p["title"].strip() and VENUE.fullmatch(p["venue"]), (study, p)
        assert not ("arxiv" in p and "openreview" in p), f"{study}: one id, the arXiv one where there is one"


def test_every_id_has_the_right_shape_and_is_the_studys_own():
    """An id is never invented: the study's claims.yaml `paper:` line or README names it."""
    for study, folder in _studies().items():
        p = load_papers()["papers"][study]
        said = (folder / "claims.yaml").read_text() + (folder / "README.md").read_text()
        if "arxiv" in p:
            assert ARXIV.fullmatch(p["arxiv"]), (study, p["arxiv"])
            assert p["arxiv"] in said, f"{study}: arXiv {p['arxiv']} is not in its claims.yaml or README"
        if "openreview" in p:
            assert OPENREVIEW.fullmatch(p["openreview"]), (study, p["openreview"])
            assert p["openreview"] in said, f"{study}: OpenReview {p['openreview']} is not in its claims.yaml or README"
        if "arxiv" not in p:           # an arXiv id the study gives its paper must not be left out
            own = yaml.safe_load((folder / "claims.yaml").read_text())["paper"] + "\n".join(
                (folder / "README.md").read_text().splitlines()[:8])          # the paper line, the README's head
            named = set(re.findall(r"arXiv[: ]+(\d{4}\.\d{4,5})", own, flags=re.I))
            assert not named, f"{study}: its files name arXiv {sorted(named)}; put it in papers.yaml"


def test_links_are_arxiv_then_openreview_else_none():
    assert paper_link({"arxiv": "2505.18651", "openreview": "x"})["href"] == "https://arxiv.org/abs/2505.18651"
    assert paper_link({"openreview": "VKJTyhAtoA"}) == {"href": "https://openreview.net/forum?id=VKJTyhAtoA",
                                                        "label": "OpenReview VKJTyhAtoA"}
    assert paper_link({"title": "t"}) is None and paper_link(None) is None


def test_the_ledger_names_no_seed_file():
    """Built from the committed claims, papers.yaml and runs.json, the page and claims.md show each
    paper by title, venue and link, and no `seeds/` file (there is no such folder in the repo)."""
    rows = json.loads((REPO / "reports/claims.json").read_text())
    papers, runs = load_papers(), load_runs()
    page, md = to_html(rows, "default", "T", papers, runs, {}), to_markdown(rows, "default", papers, runs)
    for text in (page, md):
        assert "seeds/" not in text and "seed file" not in text
    ov = overview(rows, papers, runs)
    assert all(o["venue"] for o in ov)
    for o in ov:
        want = o["link"]["href"] if o["link"] else "no arXiv id"
        assert want in page and want in md, o["study"]
