"""fgbench records: the published answer conventions on a hand case, schema errors, and the
loader for the published data: offline on the committed fixture, and its offline failure message."""
from __future__ import annotations

import json

import pytest

from stages.fgbench import records

from .conftest import FIXTURE


def test_answer_conventions_by_hand():
    # target 1.0, reference 3.5: the property increases from target to reference
    assert records.answer("single", "bool_regression", 1.0, 3.5) == "True"
    assert records.answer("interaction", "bool_regression", 3.5, 1.0) == "False"
    assert records.answer("single", "value_regression", 1.0, 3.5) == "2.5"        # ref - target
    assert records.answer("interaction", "value_regression", 1.0, 3.5) == "2.5"
    assert records.answer("comparison", "bool_regression", 1.0, 3.5) == "False"   # target > ref?
    assert records.answer("comparison", "bool_regression", 3.5, 1.0) == "True"
    assert records.answer("comparison", "value_regression", 1.0, 3.5) == "-2.5"   # target - ref
    for cat in records.CATEGORIES:
        assert records.answer(cat, "bool_classification", "(A) low", "(C) high") == "True"   # labels differ
        assert records.answer(cat, "bool_classification", "1", "1") == "False"
    assert records.answer("single", "bool_regression", 2.0, 2.0) == "False"        # no increase


def test_nine_types_and_bad_type():
    assert len(records.TYPES) == 9
    assert records.split_type("comparison_value_regression") == ("comparison", "value_regression")
    with pytest.raises(ValueError, match="unknown FGBench type 'single_bool'"):
        records.split_type("single_bool")
    with pytest.raises(ValueError, match="unknown category/task"):
        records.answer("pairs", "bool_regression", 1, 2)


def test_diff_entries_read_the_release_format():
    text = "[[['Alkene', 1, [[1, 3]]]], [['C1 alkane', 2, [[0], [2]]]]]"   # the README's example
    assert records.diff_entries(text) == [("Alkene", 1, [[1, 3]], False), ("C1 alkane", 2, [[0], [2]], True)]
    assert records.parse_list("defaultdict(<class 'list'>, {'x': [[7, 6, 'target molecule']]})") == \
        {"x": [[7, 6, "target molecule"]]}


def test_check_record_names_missing_and_non_string_fields():
    rec = {f: "x" for f in records.FIELDS}
    rec["type"] = "single_bool_regression"
    records.check_record(rec, "r")
    with pytest.raises(records.FGBenchDataError, match=r"lacks fields \['answer'\]"):
        records.check_record({k: v for k, v in rec.items() if k != "answer"}, "r")
    with pytest.raises(records.FGBenchDataError, match=r"fields \['task_num'\] are not strings"):
        records.check_record(dict(rec, task_num=0), "r")


def test_loader_reads_the_fixture_offline():
    dd = records.load_published(str(FIXTURE))
    assert set(dd) == {"train", "test"}
    assert list(dd["train"].column_names) == list(records.FIELDS)
    assert {r["type"] for r in dd["test"]} == set(records.TYPES)
    for r in dd["train"]:
        assert all(isinstance(r[f], str) for f in records.FIELDS)
        cat, task = records.split_type(r["type"])
        # the stored answer follows the published convention of its type
        assert r["answer"] == records.answer(cat, task, *(
            (r["target_label"], r["ref_label"]) if task == "bool_classification" else
            (float(r["target_label"]), float(r["ref_label"]))))
    capped = records.load_published(str(FIXTURE), max_per_type=1)
    assert len(capped["train"]) == 9


def test_loader_offline_without_the_data_says_how_to_get_it(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(records.FGBenchDataError) as info:
        records.load_published("xuan-liu/FGBench")
    msg = str(info.value)
    assert "xuan-liu/FGBench" in msg and "offline" in msg
    assert "huggingface-cli download" in msg and "source: local" in msg


def test_loader_names_missing_schema_fields(tmp_path):
    for split in ("train", "test"):
        rows = [json.loads(line) for line in (FIXTURE / f"{split}.jsonl").read_text().splitlines()]
        with open(tmp_path / f"{split}.jsonl", "w") as fh:
            for r in rows:
                r.pop("connect_dict")
                fh.write(json.dumps(r) + "\n")
    with pytest.raises(records.FGBenchDataError, match=r"lacks fields \['connect_dict'\]"):
        records.load_published(str(tmp_path))
