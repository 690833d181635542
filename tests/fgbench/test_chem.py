"""fgbench chemistry against hand-checked cases: AccFG's atoms equal RDKit substructure matches,
canonicalisation drops what it should, the pair categories and the reconstruction, the scaffold
split property."""
from __future__ import annotations

import pytest
from rdkit import Chem

from stages.fgbench import chem

ASPIRIN = "CC(=O)Oc1ccccc1C(=O)O"          # canonical RDKit SMILES; atoms 0..12 as written


@pytest.fixture(scope="module")
def afg():
    return chem.make_accfg()


def test_aspirin_groups_sit_where_a_chemist_puts_them(afg):
    assert Chem.MolToSmiles(Chem.MolFromSmiles(ASPIRIN)) == ASPIRIN
    fgs = chem.annotate(afg, ASPIRIN)
    # by hand: C10(=O11)O12 is the acid, C1(=O2)O3 the ester, c4..c9 the ring
    assert {frozenset(t) for t in fgs["carboxylic acid"]} == {frozenset({10, 11, 12})}
    assert {frozenset(t) for t in fgs["carboxylic ester"]} == {frozenset({1, 2, 3})}
    assert {frozenset(t) for t in fgs["benzene"]} == {frozenset(range(4, 10))}


def test_every_group_matches_an_rdkit_substructure_and_a_wrong_one_does_not(afg):
    for smi in (ASPIRIN, "Oc1ccccc1Cl", "CCN(CC)C(=O)c1ccncc1", "CC(C)CC(=O)OC"):
        mol = Chem.MolFromSmiles(smi)
        for name, tuples in chem.annotate(afg, smi).items():
            for atoms in tuples:
                assert chem.verify_fg(afg, mol, name, atoms) == "ok", (smi, name, atoms)
    mol = Chem.MolFromSmiles(ASPIRIN)
    assert chem.verify_fg(afg, mol, "carboxylic acid", (1, 2, 3)) == "mismatch"   # the ester's atoms
    assert chem.verify_fg(afg, mol, "no such group", (0,)) == "no_pattern"


def test_canonicalise_counts_each_reason():
    rows = [("OCC", 1.0), ("CCO", 2.0), ("C1CC", 0.0), ("[Na+].[Cl-]", 0.0), ("", 1.0), ("CCN", None)]
    kept, dropped = chem.canonicalise(rows)
    assert kept == [("CCO", 1.0)]                       # OCC and CCO are one molecule: first kept
    assert dropped == {"duplicate": 1, "unparsable": 2, "multi_component": 1, "no_label": 1}


def test_categories_by_edit_size():
    one = [[["phenol", 1, [[0]]]], []]
    none = [[], []]
    two = [[["phenol", 1, [[0]]]], [["C1 alkane", 1, [[3]]]]]
    assert chem.category_of(one, none) == "single"          # removed
    assert chem.category_of(none, one) == "single"          # added
    assert chem.category_of(one, [[["Aryl chloride", 1, [[0]]]], []]) == "single"   # replaced
    assert chem.category_of(two, none) == "interaction"
    assert chem.category_of([[["phenol", 2, [[0], [5]]]], []], none) == "interaction"
    assert chem.category_of(none, none) is None


def test_reconstruction_maps_the_attachment_site():
    """phenol -> chlorobenzene: remove OH (atom 0 of Oc1ccccc1), add Cl bonded to the same ring atom."""
    target, ref = "Oc1ccccc1", "Clc1ccccc1"
    diff = chem.compare_pair((target, ref, 0.2))
    assert diff is not None
    t_diff, r_diff = diff
    disconnect, connect, sites = chem.reconstruct(target, ref, t_diff, r_diff)
    assert disconnect == [["phenol", [[0]]]]
    (key, attach), = connect.items()
    assert key.startswith("Aryl chloride")
    assert attach == [[0, 1, "target molecule"]]            # ref Cl (0) bonds to target atom 1
    assert {(s["sign"], s["aromatic"]) for s in sites} == {(-1, 1), (1, 1)}
    # two unrelated molecules do not reconstruct
    assert chem.reconstruct("CCO", "c1ccccc1", [[], []], [[], []]) is None


def test_mapped_smiles_numbers_atoms_by_index():
    m = chem.mapped_smiles("CCO")
    assert m == "[CH3:0][CH2:1][OH:2]"


def test_scaffold_split_keeps_every_scaffold_in_one_split():
    smiles = ["c1ccccc1C", "c1ccccc1CC", "c1ccccc1O", "C1CCCCC1N", "C1CCCCC1O", "c1ccncc1C",
              "c1ccncc1N", "CCO", "CCCO", "CCCCO", "CC(=O)O", "c1ccc2ccccc2c1", "Cc1ccc2ccccc2c1",
              "C1CCOC1", "CC1CCOC1", "O=C1CCCN1", "CC(C)O", "CCN"]
    for seed in range(5):
        split = chem.scaffold_split(smiles, 0.3, seed)
        assert set(split) == set(smiles)
        assert chem.split_leaks(split) == {"scaffold": 0, "acyclic": 0, "groups": len({chem.scaffold_key(s) for s in smiles})}
        assert 0 < sum(v == "test" for v in split.values()) <= 0.3 * len(smiles)
    # acyclic molecules are their own groups; ring systems share
    assert chem.scaffold_key("CCO") != chem.scaffold_key("CCCO")
    assert chem.scaffold_key("c1ccccc1C") == chem.scaffold_key("c1ccccc1O")
    leaky = {"c1ccccc1C": "train", "c1ccccc1O": "test", "CCO": "test"}
    assert chem.split_leaks(leaky)["scaffold"] == 1


def test_similar_pairs_respect_threshold_and_partner_cap():
    smis = ["CCCCCO", "CCCCCCO", "CCCCCCCO", "CCCCCCCCO", "c1ccccc1"]
    fps = chem.morgan(smis, 2, 2048)
    pairs = chem.similar_pairs(fps, 0.5, 1)
    assert pairs and all(s >= 0.5 and i < j for i, j, s in pairs)
    assert all(4 not in (i, j) for i, j, _ in pairs)              # benzene has no similar partner
    assert len(chem.similar_pairs(fps, 0.5, 10)) >= len(pairs)


def test_unknown_source_is_refused():
    with pytest.raises(ValueError, match="unknown source 'qm9'"):
        chem.read_source("qm9")
