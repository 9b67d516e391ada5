"""The checks every dataset gets from its declaration (benchwright.validate): derived expectations
and split sizes, on small Parquet folders written here with the declared Features."""
from __future__ import annotations

import pyarrow as pa
from datasets import ClassLabel, Features, Value

from benchwright.dataset import Dataset, Unit
from benchwright.validate import check_splits, derived_expectations, run_expectations
from benchwright.writer import shard_file_name, write_parquet


class Toy(Dataset):
    name = "toy"
    configs = {
        "items": Features({"item_id": Value("string"), "group_id": Value("string"),
                           "label": ClassLabel(names=["cat", "dog"]), "split": Value("string")}),
        "groups": Features({"group_id": Value("string"), "split": Value("string")}),
    }
    id_columns = {"items": "item_id", "groups": "group_id"}
    splits = ("train", "test")
    units = (Unit("item", "items", primary=True), Unit("group", "groups"))


def write(root, config, split, rows):
    table = pa.Table.from_pylist(rows, schema=Toy.configs[config].arrow_schema)
    write_parquet(table, str(root / shard_file_name(config, split, 0, 1)))


def failed(results):
    return sorted(r["check"] for r in results if not r["ok"])


def test_derived_expectations_name_ids_keys_labels_and_splits():
    derived = derived_expectations(Toy())
    assert derived["items"] == [
        ("ExpectColumnValuesToBeUnique", {"column": "item_id"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "item_id"}),
        ("ExpectColumnValuesToNotBeNull", {"column": "group_id"}),
        ("ExpectColumnValuesToBeInSet", {"column": "label", "value_set": [0, 1]}),
        ("ExpectColumnValuesToBeInSet", {"column": "split", "value_set": ["train", "test"]}),
    ]
    assert derived["groups"][:2] == [("ExpectColumnValuesToBeUnique", {"column": "group_id"}),
                                     ("ExpectColumnValuesToNotBeNull", {"column": "group_id"})]


def test_clean_data_passes_and_each_defect_is_caught(tmp_path):
    good = tmp_path / "good"
    write(good, "items", "train", [{"item_id": "a", "group_id": "g", "label": 0, "split": "train"}])
    write(good, "items", "test", [{"item_id": "b", "group_id": "g", "label": 1, "split": "test"}])
    write(good, "groups", "train", [{"group_id": "g", "split": "train"}])
    assert failed(run_expectations(Toy(), good)) == []
    assert failed(check_splits(Toy(), good)) == []

    bad = tmp_path / "bad"
    write(bad, "items", "train", [{"item_id": "a", "group_id": None, "label": 5, "split": "dev"},
                                  {"item_id": "a", "group_id": "g", "label": 0, "split": "train"}])
    write(bad, "groups", "dev", [])
    expectations = failed(run_expectations(Toy(), bad))
    assert expectations == [
        "items: expect_column_values_to_be_in_set(column=label, value_set=[0, 1])",
        "items: expect_column_values_to_be_in_set(column=split, value_set=['train', 'test'])",
        "items: expect_column_values_to_be_unique(column=item_id)",
        "items: expect_column_values_to_not_be_null(column=group_id)",
    ]
    splits = {r["check"]: r for r in check_splits(Toy(), bad)}
    assert splits["items: split sizes"]["ok"] and "no rows for test" in splits["items: split sizes"]["detail"]
    assert not splits["groups: split sizes"]["ok"]
    assert "undeclared: ['dev']" in splits["groups: split sizes"]["detail"]
    assert "empty: ['dev']" in splits["groups: split sizes"]["detail"]
