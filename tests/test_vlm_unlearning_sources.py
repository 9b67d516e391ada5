"""VLM unlearning sources: the real VLGuard annotation files parsed completely, and the mapped
adapter's checks (no Beam: the stage functions run directly)."""
from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
import yaml

from benchwright.errors import SourceError
from benchwright.vlm_unlearning import sources
from benchwright.schemas import vlm_unlearning as schema
from benchwright.stage import Read, Reject
from benchwright.vlm_unlearning.records import SourceRecord


def _parse_all(url, fmt=None):
    fmt, raw, mapping = sources.list_records(url, fmt)
    records, rejects, read = [], [], Counter()
    for element in raw:
        for out in sources.parse_record(element, url, fmt, mapping):
            if isinstance(out, SourceRecord):
                records.append(out)
            elif isinstance(out, Reject):
                rejects.append(out)
            elif isinstance(out, Read):
                read[out.unit] += out.count
    return raw, records, rejects, read


@pytest.fixture(scope="module")
def vlguard(fixtures_dir):
    return _parse_all(str(fixtures_dir / "vlguard"))


def test_the_real_vlguard_files_parse_completely(vlguard, fixtures_dir):
    raw, records, rejects, read = vlguard
    by_file = Counter(f for f, _, _ in raw)
    assert by_file == {"train.json": 2000, "test.json": 1000}
    # Every record is a good record (the files' one defect per record is a pair's empty response).
    assert [r for r in rejects if r.unit == "record"] == []
    assert len(records) == 3000
    unsafe = Counter(r.source_file for r in records if r.image_safe is False)
    # The release's own counts: 442 unsafe test images; 977 *safe* train images (1,023 unsafe):
    # the train file flags 977 images safe=true, not 977 harmful.
    assert unsafe["test.json"] == 442
    assert Counter(r.source_file for r in records if r.image_safe)["train.json"] == 977
    categories = {(r.harmful_category, r.harmful_subcategory) for r in records if r.harmful_category}
    assert len({c for c, _ in categories}) == 4 and len(categories) == 9
    assert categories == {(c, s) for c, subs in schema.HARMFUL_CATEGORIES.items() for s in subs}


def test_the_reference_states_the_release_counts_the_files_hold(vlguard):
    """docs/reference/vlm_unlearning.md's VLGuard counts are the annotation files' (it said "977
    harmful" of the 2,000 training images: 977 is the number flagged safe)."""
    import re
    from pathlib import Path

    _, records, _, _ = vlguard
    text = " ".join((Path(__file__).parents[1] / "docs" / "reference" / "vlm_unlearning.md").read_text().split())
    stated = re.search(r"Train: ([\d,]+) images \(([\d,]+) unsafe, ([\d,]+) safe[^)]*\); "
                       r"test: ([\d,]+) \(([\d,]+) unsafe, ([\d,]+) safe\)", text)
    assert stated, "the reference no longer states the counts in this form"
    counted = []
    for stem in ("train.json", "test.json"):
        mine = [r for r in records if r.source_file == stem]
        counted += [len(mine), sum(r.image_safe is False for r in mine), sum(r.image_safe is True for r in mine)]
    assert [int(n.replace(",", "")) for n in stated.groups()] == counted == [2000, 1023, 977, 1000, 442, 558]


def test_vlguard_pairs_become_examples_with_roles_and_splits(vlguard):
    raw, records, rejects, read = vlguard
    examples = [e for r in records for e in r.examples]
    pairs = sum(len(r["instr-resp"]) for _, _, r in raw)
    # every pair is read once: published as an example or quarantined with a reason
    assert read["example"] + sum(r.count for r in rejects if r.unit == "example") == pairs
    assert read["example"] == len(examples)
    empty = [r for r in rejects if r.unit == "example"]
    assert len(empty) == 17 and {r.reason for r in empty} == {"empty response"}
    assert "test.json#id=PrivacyAlert_test_18/instr-resp[0]" in {r.locator for r in empty}
    split = Counter((e.split, e.subset) for e in examples)
    assert split[("forget", "unsafes")] == 1023 and split[("forget", "safe_unsafes")] == 977
    assert split[("retain", "safe_safes")] == 977
    assert split[("test", "unsafes")] == 442 and split[("test", "safe_safes")] == 558 - 17
    assert {(e.subset, e.role) for e in examples} == {("unsafes", "forget"), ("safe_unsafes", "forget"),
                                                      ("safe_safes", "retain")}
    # ids: file stem, record id, pair index (8 record ids occur in both files)
    ids = [e.example_id for e in examples]
    assert Counter(ids).most_common(1)[0][1] == 2  # only the duplicated train id repeats before dedup
    assert "test/Ads_306373#1" in ids and "train/Ads_364812#0" in ids


def test_vlguard_descriptions_never_leak_an_examples_own_response(vlguard):
    _, records, _, _ = vlguard
    for r in records:
        for e in r.examples:
            assert e.description != e.response
            if e.subset == "unsafes":
                assert e.description_source == "category" and e.harmful_category in e.description
            if e.subset == "safe_safes":
                assert e.description_source == "template"
    safe_unsafes = [e for r in records for e in r.examples if e.subset == "safe_unsafes"]
    assert Counter(e.description_source for e in safe_unsafes) == {"safe_response": 977 + 558 - 17, "template": 17}


def test_bad_vlguard_records_are_refused_with_reasons(tmp_path, fixtures_dir):
    train = json.loads((fixtures_dir / "vlguard" / "train.json").read_text())[:6]
    train[0]["harmful_category"] = "made up"                       # unsafe image, unknown category
    train[1]["instr-resp"] = []                                    # no pairs
    del train[2]["image"]
    train[3]["instr-resp"][0] = {"response": "an answer to nothing"}
    (tmp_path / "train.json").write_text(json.dumps(train))
    _, records, rejects, read = _parse_all(str(tmp_path))
    reasons = {(r.unit, r.locator): r.reason for r in rejects}
    ids = [r["id"] for r in train]
    assert "unknown harmful_category 'made up'" in reasons[("record", f"train.json#id={ids[0]}")]
    assert reasons[("example", f"train.json#id={ids[0]}")].startswith("its record is refused")
    assert "no instruction-response pairs" in reasons[("record", f"train.json#id={ids[1]}")]
    assert "'image' is missing" in reasons[("record", f"train.json#id={ids[2]}")]
    assert "no instruction" in reasons[("example", f"train.json#id={ids[3]}/instr-resp[0]")]
    assert len(records) == 6 - 3 - (not train[3]["safe"])


def _mapped_source(tmp_path, mapping: dict, rows: list[dict]):
    (tmp_path / "forget.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "mapping.yaml").write_text(yaml.safe_dump(mapping))
    return str(tmp_path)


MAPPING = {"benchmark": "CLEAR-like", "image_root": "images",
           "files": [{"path": "forget.jsonl"}],
           "fields": {"id": "name_id", "image": "file", "instruction": "question", "response": "answer",
                      "role": "split", "description": "caption"},
           "roles": {"forget10": "forget", "retain90": "retain"}}
ROWS = [{"name_id": 7, "file": "a.png", "question": "Who is this?", "answer": "Ana", "split": "forget10",
         "caption": "A woman in a red coat."},
        {"name_id": 8, "file": "b.png", "question": "Where is this?", "answer": "Oslo", "split": "retain90"}]


def test_a_mapped_source_maps_fields_and_roles(tmp_path):
    url = _mapped_source(tmp_path, MAPPING, ROWS)
    assert sources.detect_format(url) == "mapped"
    _, records, rejects, _ = _parse_all(url)
    assert rejects == []
    a, b = (r.examples[0] for r in records)
    assert (a.example_id, a.role, a.split, a.instruction, a.response) == ("forget/7#0", "forget", "forget",
                                                                         "Who is this?", "Ana")
    assert (a.description, a.description_source) == ("A woman in a red coat.", "caption")
    assert (b.role, b.split, b.description_source) == ("retain", "retain", "template")
    assert records[0].image_url == f"{url}/images/a.png"


@pytest.mark.parametrize("change, message", [
    (lambda m: m["fields"].pop("response"), "fields: 'response' is a required property"),
    (lambda m: m["fields"].update(instrution="question"), "Additional properties are not allowed ('instrution'"),
    (lambda m: m["fields"].update(image=["file"]), "fields/image: ['file'] is not of type 'string'"),
    (lambda m: m["files"][0].update(role="forgot"), "files/0/role: 'forgot' is not one of"),
    (lambda m: m["fields"].update(instruction="qestion"), "fields/instruction names 'qestion', which no record"),
    (lambda m: m["fields"].pop("role"), "fields/role is required"),
])
def test_a_bad_mapping_is_refused_naming_the_key(tmp_path, change, message):
    mapping = json.loads(json.dumps(MAPPING))
    change(mapping)
    url = _mapped_source(tmp_path, mapping, ROWS)
    with pytest.raises(SourceError) as err:
        sources.list_records(url)
    assert "mapping.yaml" in str(err.value) and message in str(err.value)


def test_an_unreadable_mapping_or_annotation_file_is_refused(tmp_path):
    url = _mapped_source(tmp_path, MAPPING, ROWS)
    (tmp_path / "mapping.yaml").write_text("files: [\n  - path: x\n")
    with pytest.raises(SourceError, match=r"mapping.yaml: malformed YAML \(line"):
        sources.list_records(url)
    shutil.rmtree(tmp_path)
    tmp_path.mkdir()
    (tmp_path / "train.json").write_text('{"id": 1}')
    with pytest.raises(SourceError, match="train.json: expected a JSON array"):
        sources.list_records(str(tmp_path))


def test_a_mapped_record_with_an_unknown_role_is_quarantined(tmp_path):
    rows = ROWS + [{"name_id": 9, "file": "c.png", "question": "Q?", "answer": "A", "split": "holdout"}]
    _, records, rejects, _ = _parse_all(_mapped_source(tmp_path, MAPPING, rows))
    assert len(records) == 2
    [record, example] = rejects
    assert record.locator == "forget.jsonl#id=9" and "'holdout', which maps to no role" in record.reason
    assert (example.unit, example.count) == ("example", 1)


def test_a_release_without_an_id_column_gets_stable_row_index_ids(tmp_path):
    """The Hugging Face releases have no id column and repeat one shard name in every folder
    (``forget05/train-00000-of-00001.parquet``, ``retain95/train-00000-of-00001.parquet``): without
    ``fields.id`` a record's id is its position in its file, and its key starts with the file's path,
    so the two files' rows stay apart; the same file lists to the same ids every time."""
    import datasets

    features = datasets.Features({"image": datasets.Image(), "question": datasets.Value("string"),
                                  "answer": datasets.Value("string")})
    for folder, n in (("forget05", 3), ("retain95", 2)):
        (tmp_path / folder).mkdir()
        datasets.Dataset.from_dict(
            {"image": [{"bytes": b"\x89PNG not read here", "path": f"{folder}{i}.png"} for i in range(n)],
             "question": [f"{folder} question {i}?" for i in range(n)], "answer": [f"answer {i}" for i in range(n)]},
            features=features).to_parquet(str(tmp_path / folder / "train-00000-of-00001.parquet"), batch_size=2)
    (tmp_path / "extra.jsonl").write_text('{"image": "a.png", "question": "Q0?", "answer": "A0"}\n\n'
                                          '{"image": "b.png", "question": "Q1?", "answer": "A1"}\n')
    (tmp_path / "mapping.yaml").write_text(yaml.safe_dump({
        "files": [{"path": "forget05/train-00000-of-00001.parquet", "role": "forget"},
                  {"path": "retain95/train-00000-of-00001.parquet", "role": "retain"},
                  {"path": "extra.jsonl", "role": "retain"}],
        "fields": {"image": "image", "instruction": "question", "response": "answer"}}))
    _, records, rejects, _ = _parse_all(str(tmp_path))
    assert rejects == []
    ids = [r.examples[0].example_id for r in records]
    assert ids == ["forget05/train-00000-of-00001/0#0", "forget05/train-00000-of-00001/1#0",
                   "forget05/train-00000-of-00001/2#0", "retain95/train-00000-of-00001/0#0",
                   "retain95/train-00000-of-00001/1#0", "extra/0#0", "extra/1#0"]  # a blank line is no record
    assert len({r.record_key for r in records}) == len(records)
    assert [r.examples[0].instruction for r in records][2] == "forget05 question 2?"  # the second row group's row
    assert [r.examples[0].example_id for r in _parse_all(str(tmp_path))[1]] == ids
    assert records[3].locator == "retain95/train-00000-of-00001.parquet#id=0"


def test_two_mapped_files_that_would_share_record_keys_are_refused(tmp_path):
    url = _mapped_source(tmp_path, MAPPING, ROWS)
    (tmp_path / "forget.json").write_text(json.dumps(ROWS))
    mapping = json.loads(json.dumps(MAPPING))
    mapping["files"].append({"path": "forget.json", "role": "forget"})
    (tmp_path / "mapping.yaml").write_text(yaml.safe_dump(mapping))
    with pytest.raises(SourceError, match=r"'forget.jsonl' and 'forget.json' are one annotation file"):
        sources.list_records(url)


def test_a_fixed_role_file_needs_no_role_field_but_a_role_less_one_does(tmp_path):
    """Only files without a fixed role read the role field (the docstring's forget10 / retain90 have none)."""
    mapping = json.loads(json.dumps(MAPPING))
    mapping["files"] = [{"path": "forget.jsonl", "role": "forget"}]
    rows = [{k: v for k, v in r.items() if k != "split"} for r in ROWS]
    _, records, rejects, _ = _parse_all(_mapped_source(tmp_path, mapping, rows))
    assert rejects == [] and [r.examples[0].role for r in records] == ["forget", "forget"]
    mapping["files"] = [{"path": "forget.jsonl"}]
    (tmp_path / "mapping.yaml").write_text(yaml.safe_dump(mapping))
    with pytest.raises(SourceError, match="fields/role names 'split', which no record of forget.jsonl has"):
        sources.list_records(str(tmp_path))
