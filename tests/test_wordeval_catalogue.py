"""WordEval catalogue: validity, scale, determinism of generated cases, dataset schema."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter

import pytest

from benchwright.wordeval.cases import build_case, describe_target, resolve_param
from benchwright.wordeval.catalogue import SUBSYSTEMS, load_catalogue, validate_catalogue


@pytest.fixture(scope="module")
def cat():
    return load_catalogue()


@pytest.fixture(scope="module")
def built(wordeval_cases):
    return wordeval_cases


def test_catalogue_is_valid(cat):
    assert validate_catalogue(cat) == []


def test_catalogue_scale(cat):
    assert set(cat.subsystems) == set(SUBSYSTEMS) and len(SUBSYSTEMS) == 15
    assert len(cat.commands) >= 120
    assert len(cat.com_objects) >= 40
    assert len(cat.templates) >= 10
    assert len(cat.object_property_pairs()) >= 120


def test_units_are_fully_specified(cat):
    for uid, u in cat.units.items():
        assert u["command"] and u["com_object"] and u["ooxml"], uid
        assert len(u["instructions"]) >= 2, uid
        assert u["reference"], uid
        assert u["oracle"]["targets"], uid
        assert isinstance(u["libreoffice_survives"], bool), uid
        for name, p in u["params"].items():
            assert "type" in p, (uid, name)
            if p["type"] in ("length", "size"):
                assert p.get("unit"), (uid, name)


def test_validator_rejects_bad_units(cat):
    import copy
    bad = copy.deepcopy(cat)
    u = bad.units["font_bold"]
    u["target"] = {"xpath": "/w:document/w:body/w:p[3]"}
    u["instructions"] = ["only one"]
    bad.units["font_size"]["params"]["value"].pop("unit")
    problems = validate_catalogue(bad)
    assert any("XML index" in p for p in problems)
    assert any("two instruction" in p for p in problems)
    assert any("no unit" in p for p in problems)


def test_typed_parameters_convert_units():
    import random
    rng = random.Random(0)
    assert resolve_param({"type": "length", "unit": "in", "value": 0.5}, rng) == (720, "0.5 in")
    assert resolve_param({"type": "length", "unit": "cm", "value": 2.54}, rng)[0] == 1440
    assert resolve_param({"type": "size", "unit": "pt", "value": 14}, rng) == (28, "14 pt")
    assert resolve_param({"type": "length", "unit": "in", "value": 1, "to": "emu"}, rng)[0] == 914400
    assert resolve_param({"type": "color", "value": {"value": "c00000", "label": "dark red"}}, rng) == \
        ("C00000", "dark red (hex C00000)")


def test_targets_are_stable_anchors_not_indexes(built):
    for case in built["atomic"]:
        tgt = json.loads(case["oracle"])["target"]
        assert not any(k in tgt for k in ("index", "xpath")), case["case_id"]
        desc = describe_target(tgt)
        assert desc and "None" not in desc, case["case_id"]


def test_case_counts_and_columns(built, cat):
    atomic, comps = built["atomic"], built["compositional"]
    assert built["errors"] == []
    assert len(atomic) >= 300
    assert len({c["case_id"] for c in atomic}) == len(atomic)
    assert len({c["unit_id"] for c in atomic}) == len(cat.units), "every unit yields at least one case"
    assert len({c["command"] for c in atomic}) >= 120
    assert len({c["com_object"] for c in atomic}) >= 40
    assert set(Counter(c["subsystem"] for c in atomic)) == set(SUBSYSTEMS)
    assert len({c["template"] for c in comps}) >= 10
    cols = {"case_id", "instruction", "input_docx", "reference_docx", "oracle", "command", "subsystem", "com_object",
            "properties", "unit_id", "seed", "base_document"}
    for c in atomic:
        assert cols <= set(c) and isinstance(c["input_docx"], bytes) and isinstance(c["properties"], list)
        assert c["input_docx"] != c["reference_docx"]
        json.loads(c["oracle"])
    ids = {c["case_id"] for c in atomic}
    for c in comps:
        assert cols | {"template", "atomic_case_ids"} <= set(c)
        assert c["atomic_case_ids"] and set(c["atomic_case_ids"]) <= ids, c["case_id"]
        assert c["instruction"].startswith("Make these edits in order: (1)")


def test_real_fixture_documents_are_base_documents(built):
    bases = {c["base_document"] for c in built["atomic"]}
    assert len([b for b in bases if b.startswith("fx-")]) >= 5


def test_schema_features_accept_cases(built):
    import datasets
    from benchwright.schemas.wordeval import ATOMIC, COMPOSITIONAL
    ds = datasets.Dataset.from_list(built["atomic"][:5], features=ATOMIC)
    assert ds.features["input_docx"] == datasets.Value("binary")
    assert ds[0]["input_docx"] == built["atomic"][0]["input_docx"]
    ds2 = datasets.Dataset.from_list(built["compositional"][:3], features=COMPOSITIONAL)
    assert ds2[0]["atomic_case_ids"] == built["compositional"][0]["atomic_case_ids"]


_DIGEST_SCRIPT = r"""
import hashlib, json, sys
from benchwright.wordeval.cases import build_case, build_composite
out = {}
for cid in json.loads(sys.argv[1]):
    unit, base, seed = cid.split("--")
    if unit.startswith("comp_"):
        c = build_composite(unit, int(seed[1:]), base)
    else:
        c = build_case(unit, int(seed[1:]), base)
    out[cid] = [hashlib.sha256(c["input_docx"]).hexdigest(), hashlib.sha256(c["reference_docx"]).hexdigest(),
                hashlib.sha256((c["instruction"] + c["oracle"]).encode()).hexdigest()]
print(json.dumps(out))
"""


def test_two_builds_are_byte_identical(built):
    """A fresh process (new base documents, new hash seeds) rebuilds the same bytes."""
    sample = built["atomic"][::12] + built["compositional"][::7]
    ids = [c["case_id"] for c in sample]
    proc = subprocess.run([sys.executable, "-c", _DIGEST_SCRIPT, json.dumps(ids)], capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ, "PYTHONHASHSEED": "123"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    fresh = json.loads(proc.stdout)
    for c in sample:
        mine = [hashlib.sha256(c["input_docx"]).hexdigest(), hashlib.sha256(c["reference_docx"]).hexdigest(),
                hashlib.sha256((c["instruction"] + c["oracle"]).encode()).hexdigest()]
        assert fresh[c["case_id"]] == mine, c["case_id"]


def test_zip_members_are_ordered_with_fixed_timestamps(built):
    import io
    import zipfile
    zf = zipfile.ZipFile(io.BytesIO(built["atomic"][0]["reference_docx"]))
    names = zf.namelist()
    assert names[0] == "[Content_Types].xml" and names[1] == "_rels/.rels"
    assert names[2:] == ["word/document.xml", "word/_rels/document.xml.rels"] + sorted(names[4:])
    assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    core = zf.read("docProps/core.xml").decode()
    assert "2024-01-01T00:00:00Z" in core


def test_single_case_rebuild_matches(built):
    c0 = built["atomic"][3]
    again = build_case(c0["unit_id"], c0["seed"], c0["base_document"])
    assert again["input_docx"] == c0["input_docx"] and again["reference_docx"] == c0["reference_docx"]


def test_every_compositional_reference_passes_its_own_oracle(built):
    # a reference failing its own oracle is quarantined by the build (no agent could pass it):
    # comp_tracked_edits once drew its tracked deletion inside the paragraph its tracked insertion
    # had changed, so neither step's text was where its oracle looked; "apart" redraws the step
    from benchwright.wordeval.stages import own_oracle_failures

    failing = {c["case_id"]: f for c in built["compositional"] if (f := own_oracle_failures(c))}
    assert failing == {}
    tracked = [c for c in built["compositional"] if c["template"] == "comp_tracked_edits"]
    assert len(tracked) == 4
    for case in tracked:
        insert, delete = (t["anchor"] for t in json.loads(case["oracle"])["targets"] if t["anchor"] and "paragraph" in t["anchor"])
        assert insert["paragraph"] != delete["paragraph"], case["case_id"]


def test_an_unknown_binding_is_refused(cat):
    import copy

    broken = copy.deepcopy(cat)
    broken.templates["comp_tracked_edits"]["bind"] = [{"from": 1, "to": 2, "what": "elsewhere"}]
    assert validate_catalogue(broken) == ["template comp_tracked_edits: unknown binding 'elsewhere'"]


def test_a_catalogue_read_before_is_read_again_once_a_folder_sits_where_a_unit_file_was(tmp_path):
    """The catalogue is memoised by what its files hold (``content_key``) and a source by its listing: a folder
    named like a unit file, added to that folder or to a copy, holds no bytes, yet it makes the source unreadable
    (as the hostile corpus's "unreadable (a folder)" case says), whatever this process read before."""
    import shutil

    from benchwright.errors import SourceError
    from benchwright.wordeval.sources import read_catalogue
    from benchwright.wordeval.synth import write_source

    first = tmp_path / "first"
    write_source(first, scale="tiny")
    read_catalogue(str(first))
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    read_catalogue(str(copy))  # the same content elsewhere: one parse serves both
    for folder in (copy, first):
        (folder / "units" / "zz_folder.yaml").mkdir()
        with pytest.raises(SourceError, match="unreadable catalogue file.*zz_folder.yaml"):
            read_catalogue(str(folder))
