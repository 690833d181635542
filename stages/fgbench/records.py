"""FGBench records: the published schema, the answer conventions, question text, the hub loader.

The published FGBench (Liu et al., arXiv 2508.01055; Hugging Face ``xuan-liu/FGBench``, code
xuanliugit/FGBench) has splits ``train`` and ``test`` whose records hold the fields in
:data:`FIELDS`, every one a string. ``type`` is ``<category>_<task>`` with category in
single / interaction / comparison and task in bool_classification / bool_regression /
value_regression. Answer conventions (as the release builds them):

* bool classification, every category: 'True' iff target_label != ref_label;
* single / interaction bool regression: 'True' iff the property increases from the target
  to the reference molecule (target_label < ref_label);
* single / interaction value regression: ref_label - target_label;
* comparison bool regression: 'True' iff target_label > ref_label;
* comparison value regression: target_label - ref_label.

Comparison questions carry no edit text (only the two SMILES). The same code reads our locally
built records and the published ones.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

FIELDS = ("question", "answer", "target_smiles", "target_mapped_smiles", "ref_smiles",
          "ref_mapped_smiles", "target_diff", "ref_diff", "disconnect_list", "connect_dict",
          "target_label", "ref_label", "property_name", "type", "dataset", "task_num", "split")
CATEGORIES = ("single", "interaction", "comparison")
TASKS = ("bool_classification", "bool_regression", "value_regression")
TYPES = tuple(f"{c}_{t}" for c in CATEGORIES for t in TASKS)
SPLITS = ("train", "test")
HUB_HELP = ("the published FGBench is on the Hugging Face Hub as {name!r}. To get it: on a machine with "
            "network access, unset HF_HUB_OFFLINE / HF_DATASETS_OFFLINE and run once "
            "`python -c \"import datasets; datasets.load_dataset('{name}')\"` (it is cached under "
            "$HF_HOME), or download the repository (`huggingface-cli download --repo-type dataset {name} "
            "--local-dir <dir>`) and set fgbench.<profile>.prepare.hub_name to that folder. The default "
            "`source: local` needs no download.")


class FGBenchDataError(RuntimeError):
    """The published data cannot be loaded, or a record does not follow the schema."""


def split_type(type_: str) -> tuple[str, str]:
    """'single_bool_regression' -> ('single', 'bool_regression')."""
    if type_ not in TYPES:
        raise ValueError(f"unknown FGBench type {type_!r}; allowed: {', '.join(TYPES)}")
    cat, task = type_.split("_", 1)
    return cat, task


def answer(category: str, task: str, target_label: Any, ref_label: Any) -> str:
    """The published answer of a question, as a string."""
    if category not in CATEGORIES or task not in TASKS:
        raise ValueError(f"unknown category/task {category!r}/{task!r}")
    if task == "bool_classification":
        return str(target_label != ref_label)
    t, r = float(target_label), float(ref_label)
    if task == "bool_regression":
        return str(t > r) if category == "comparison" else str(t < r)
    return str(t - r) if category == "comparison" else str(r - t)


def fmt_label(label: Any, task: str) -> str:
    if task == "bool_classification":
        return str(label)
    return f"{round(float(label), 3):g}"


def edit_text(disconnect_list: list, connect_dict: dict) -> str:
    """Words for the FG edit (removed groups with their atoms; added groups with where they attach)."""
    parts = []
    if disconnect_list:
        parts.append("removing " + "; ".join(f"{name} at atoms {list(map(list, atoms))}"
                                              for name, atoms in disconnect_list))
    if connect_dict:
        adds = []
        for name, sites in connect_dict.items():
            where = ", ".join(f"its atom {a} bonded to atom {b} of the {frag}" for a, b, frag in sites)
            adds.append(f"{name} ({where})" if where else name)
        parts.append("adding " + "; ".join(adds))
    return " and ".join(parts) if parts else "with no change"


def question(category: str, task: str, rec: dict) -> str:
    """Our own wording of the nine question templates (same information as the release's)."""
    prop = rec["property_name"]
    if category == "comparison":
        ref = fmt_label(rec["ref_label"], task)
        head = (f"Target molecule: {rec['target_smiles']}. Reference molecule: {rec['ref_smiles']}, whose "
                f"{prop} is {ref}. ")
        ask = {"bool_classification": "Is the target's label different from the reference's? Answer True or False.",
               "bool_regression": "Is the target's value higher than the reference's? Answer True or False.",
               "value_regression": "By how much does the target's value differ from the reference's "
                                   "(target minus reference)? Answer with a signed number."}[task]
        return head + ask
    tgt = fmt_label(rec["target_label"], task)
    head = (f"A molecule with atom-numbered SMILES {rec['target_mapped_smiles']} has {prop} {tgt}. "
            f"It is modified by {edit_text(rec['_disconnect'], rec['_connect'])}. ")
    ask = {"bool_classification": "Does the label of the modified molecule change? Answer True or False.",
           "bool_regression": "Does the property of the modified molecule increase? Answer True or False.",
           "value_regression": "What is the change of the property (modified minus original)? "
                               "Answer with a signed number."}[task]
    return head + ask


def parse_list(text: str) -> Any:
    """A stringified Python literal of the release (lists, tuples, dicts) back to Python."""
    text = (text or "").strip()
    if not text:
        return []
    if text.startswith("defaultdict("):
        text = text[text.index("{"):text.rindex("}") + 1]
    return ast.literal_eval(text)


def diff_entries(diff_text: str) -> list[tuple[str, int, list[list[int]], bool]]:
    """target_diff / ref_diff -> [(name, count, atom lists, is_alkane)] for FG and alkane entries."""
    val = parse_list(diff_text)
    if not val:
        return []
    fg_list, alkane_list = (val[0], val[1]) if len(val) == 2 else (val[0], [])
    out = []
    for entries, alk in ((fg_list, False), (alkane_list, True)):
        for name, count, atoms in entries:
            out.append((str(name), int(count), [list(a) for a in atoms], alk))
    return out


def check_record(rec: dict, where: str) -> None:
    missing = [f for f in FIELDS if f not in rec]
    if missing:
        raise FGBenchDataError(f"{where}: record lacks fields {missing} of the FGBench schema {list(FIELDS)}")
    bad = [f for f in FIELDS if not isinstance(rec[f], str)]
    if bad:
        raise FGBenchDataError(f"{where}: fields {bad} are not strings (the release stores every field as a string)")
    if rec["type"] not in TYPES:
        raise FGBenchDataError(f"{where}: type {rec['type']!r} is not one of {list(TYPES)}")


def load_published(name: str, max_per_type: int = 0, seed: int = 0):
    """The published FGBench as a DatasetDict (train/test), schema-checked.

    ``name`` is the hub name (``xuan-liu/FGBench``) or a local folder in the same layout (what
    the tests use: data/fixtures/fgbench). Offline without the data this raises
    :class:`FGBenchDataError` saying how to get it.
    """
    import datasets

    local = Path(name).exists()
    try:
        dd = datasets.load_dataset(str(name))
    except Exception as exc:  # noqa: BLE001 - every failure to load gets the same advice
        if local:
            raise FGBenchDataError(f"cannot read FGBench from folder {name!r}: {type(exc).__name__}: {exc}") from None
        offline = any(os.environ.get(k, "").lower() in ("1", "true", "yes")
                      for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))
        why = "offline (HF_HUB_OFFLINE/HF_DATASETS_OFFLINE) and not in the local cache" if offline else \
            "it could not be downloaded"
        raise FGBenchDataError(f"cannot load FGBench {name!r}: {why} ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''}). " +
                               HUB_HELP.format(name=name)) from None
    missing = [s for s in SPLITS if s not in dd]
    if missing:
        raise FGBenchDataError(f"FGBench {name!r} has splits {list(dd)}, expected {list(SPLITS)}")
    out = {}
    for split in SPLITS:
        ds = dd[split]
        cols = set(ds.column_names)
        lack = [f for f in FIELDS if f not in cols]
        if lack:
            raise FGBenchDataError(f"FGBench {name!r} split {split!r} lacks fields {lack} of the schema")
        ds = ds.select_columns(list(FIELDS))
        if max_per_type:
            ds = _cap_per_type(ds, max_per_type, seed)
        for i, rec in enumerate(ds.select(range(min(len(ds), 50)))):
            check_record(rec, f"{name}:{split}[{i}]")
        out[split] = ds
    return datasets.DatasetDict(out)


def _cap_per_type(ds, cap: int, seed: int):
    import numpy as np

    types = np.asarray(ds["type"])
    rng = np.random.default_rng(seed)
    keep = []
    for t in sorted(set(types.tolist())):
        idx = np.flatnonzero(types == t)
        if len(idx) > cap:
            idx = np.sort(rng.choice(idx, size=cap, replace=False))
        keep.extend(idx.tolist())
    return ds.select(sorted(keep))
