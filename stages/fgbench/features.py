"""Features of the fgbench models, read from FGBench records (ours or the published ones).

* FG-agnostic: Morgan fingerprint of the known molecule and the fingerprint difference of the
  pair (ref - target), plus the label the question states (target's for single/interaction,
  the reference's for comparison).
* FG-aware: the same, plus the FG edit (signed counts of each group over a vocabulary fitted on
  the training records: + added in the reference, - removed from the target; alkane carbons the
  same way) and where it sits (for added and removed groups: how many bonds attach them to
  aromatic, ring and chain atoms; group sizes).
* FG-shuffled (the control of the FG-aware model): the FG-aware features with each question's
  FG-edit block taken from another question of its type and dataset (a permutation drawn per
  seed, within each split): the same columns and model, no link to the question's own edit.
* Label only (structure-blind): the label the question states, nothing of the molecules.
* Molecule level: fingerprint alone vs fingerprint + AccFG group counts (and + the counts of
  another molecule: the control).
"""
from __future__ import annotations

import re
from collections import Counter

import numpy as np

from . import records

POSITION = ("n", "size", "aromatic", "ring", "chain")


def label_value(label: str, classes: dict[str, float] | None = None) -> float:
    """A label string as a number: floats as they are, class names by their rank."""
    try:
        return float(label)
    except ValueError:
        if classes is None or label not in classes:
            raise ValueError(f"label {label!r} is neither a number nor a known class") from None
        return classes[label]


def class_ranks(labels) -> dict[str, float]:
    """Non-numeric labels -> their rank in sorted order ('(A) low' < '(B) medium' < '(C) high')."""
    names = sorted({lab for lab in labels if not _is_float(lab)})
    return {n: float(i) for i, n in enumerate(names)}


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


class Fingerprints:
    """Morgan bit vectors as numpy rows, memoised by SMILES."""

    def __init__(self, radius: int, bits: int):
        from rdkit.Chem import rdFingerprintGenerator

        self.gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=bits)
        self.bits = bits
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, smiles: str) -> np.ndarray:
        if smiles not in self.cache:
            from rdkit import Chem

            mol = Chem.MolFromSmiles(smiles)
            self.cache[smiles] = (np.zeros(self.bits, dtype=np.float32) if mol is None else
                                  self.gen.GetFingerprintAsNumPy(mol).astype(np.float32))
        return self.cache[smiles]


def known_label(rec: dict, classes: dict[str, float]) -> float:
    cat, _ = records.split_type(rec["type"])
    return label_value(rec["ref_label"] if cat == "comparison" else rec["target_label"], classes)


def agnostic(recs: list[dict], fp: Fingerprints, classes: dict[str, float]) -> np.ndarray:
    rows = []
    for r in recs:
        t, f = fp(r["target_smiles"]), fp(r["ref_smiles"])
        rows.append(np.concatenate([t, f - t, [known_label(r, classes)]]))
    return np.asarray(rows, dtype=np.float32).reshape(len(recs), -1)


_ALKANE = re.compile(r"^C(\d+) alkane$")


def edit_vocab(recs: list[dict], min_count: int = 2) -> list[str]:
    """FG names seen in at least ``min_count`` training edits (alkanes are one feature apart)."""
    c = Counter()
    for r in recs:
        for side in ("target_diff", "ref_diff"):
            for name, _n, _a, alk in records.diff_entries(r[side]):
                if not alk:
                    c[name] += 1
    return sorted(n for n, k in c.items() if k >= min_count)


class EditParts:
    """The parts of a question's FG edit that do not depend on the vocabulary, memoised by the
    edit (the same question in another seed's split is parsed once): ``(names, alkane, sites)``,
    the signed count of each group name (+ added in the reference, - removed from the target),
    the signed alkane carbons, and the sites block (for removed, then added groups: instances,
    sizes, bonds to aromatic, ring and chain atoms)."""

    def __init__(self):
        self.cache: dict[tuple, tuple[dict[str, float], float, np.ndarray]] = {}

    def __call__(self, r: dict):
        key = (r["target_smiles"], r["ref_smiles"], r["target_diff"], r["ref_diff"])
        if key not in self.cache:
            self.cache[key] = _edit_parts(r)
        return self.cache[key]


def _edit_parts(r: dict):
    from rdkit import Chem

    from .chem import edit_sites

    names: dict[str, float] = {}
    alkane = 0.0
    sites_v = np.zeros(2 * len(POSITION), dtype=np.float32)
    for side, sign in (("target_diff", -1.0), ("ref_diff", 1.0)):
        entries = records.diff_entries(r[side])
        for name, n, _atoms, is_alk in entries:
            if is_alk:
                m = _ALKANE.match(name)
                alkane += sign * n * (int(m.group(1)) if m else 1)
            else:
                names[name] = names.get(name, 0.0) + sign * n
        mol = Chem.MolFromSmiles(r["target_smiles" if sign < 0 else "ref_smiles"])
        if mol is None or not entries:
            continue
        diff = [[[n, c, a] for n, c, a, is_alk in entries if not is_alk],
                [[n, c, a] for n, c, a, is_alk in entries if is_alk]]
        try:
            sites = edit_sites(mol, diff, int(sign))
        except (RuntimeError, IndexError, ValueError):   # atom indices that do not fit this molecule
            continue
        base = 0 if sign < 0 else len(POSITION)
        for s in sites:
            sites_v[base] += 1
            sites_v[base + 1] += s["size"]
            sites_v[base + 2] += s["aromatic"]
            sites_v[base + 3] += s["ring"]
            sites_v[base + 4] += s["chain"]
    return names, alkane, sites_v


def edit_features(r: dict, vocab_index: dict[str, int], parts: EditParts | None = None) -> np.ndarray:
    """Signed FG counts over the vocabulary (+ other groups, alkane carbons) and the edit sites."""
    names, alkane, sites = (parts or _edit_parts)(r)
    v = np.zeros(len(vocab_index) + 2 + 2 * len(POSITION), dtype=np.float32)
    other = len(vocab_index)
    for name, n in names.items():
        v[vocab_index.get(name, other)] += n
    v[other + 1] = alkane
    v[other + 2:] = sites
    return v


def edit_matrix(recs: list[dict], vocab: list[str], parts: EditParts | None = None) -> np.ndarray:
    """The FG-edit block of the FG-aware features, one row per record."""
    idx = {n: i for i, n in enumerate(vocab)}
    width = len(vocab) + 2 + 2 * len(POSITION)
    return np.asarray([edit_features(r, idx, parts) for r in recs], dtype=np.float32).reshape(len(recs), width)


def aware(recs: list[dict], fp: Fingerprints, classes: dict[str, float], vocab: list[str],
          parts: EditParts | None = None) -> np.ndarray:
    return np.hstack([agnostic(recs, fp, classes), edit_matrix(recs, vocab, parts)])


def label_only(recs: list[dict], classes: dict[str, float]) -> np.ndarray:
    """The structure-blind features: the label the question states, nothing of the molecules."""
    return np.asarray([[known_label(r, classes)] for r in recs], dtype=np.float32).reshape(len(recs), 1)


def fg_counts(fgs_json: list[str], vocab: list[str]) -> np.ndarray:
    """Molecule-level AccFG group counts over ``vocab``."""
    import json

    idx = {n: i for i, n in enumerate(vocab)}
    out = np.zeros((len(fgs_json), len(vocab)), dtype=np.float32)
    for row, text in enumerate(fgs_json):
        for name, atoms in json.loads(text).items():
            if name in idx:
                out[row, idx[name]] = len(atoms)
    return out
