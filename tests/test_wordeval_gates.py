"""Gates on every generated file: python-docx reload, XSD, ids/relationships/content types/fields;
LibreOffice on a sample (one batch); the LibreOffice re-save self-test on a sample."""
from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from benchwright.evaluation.wordeval import evaluate_docx
from benchwright.formats.ooxml import gate_docx
from benchwright.formats.ooxml import libreoffice
from benchwright.formats.ooxml.checks import check_package
from benchwright.formats.ooxml.package import Package
from benchwright.wordeval.cases import NotApplicable, build_case
from benchwright.wordeval.catalogue import load_catalogue
from benchwright.wordeval.selftest import LIBREOFFICE_LOSSY, LIBREOFFICE_TEST_BASES


def _unique_files(built: dict):
    files = {}
    for c in built["atomic"] + built["compositional"]:
        for kind in ("input_docx", "reference_docx"):
            files.setdefault(hashlib.sha256(c[kind]).hexdigest(), (f"{c['case_id']}:{kind}", c[kind]))
    return files


def _gate(item):
    name, data = item
    return name, gate_docx(data, name)


def test_every_generated_file_passes_the_gates(wordeval_cases):
    files = list(_unique_files(wordeval_cases).values())
    assert len(files) > 400
    with ProcessPoolExecutor(2) as pool:
        results = list(pool.map(_gate, files, chunksize=16))
    bad = {name: problems for name, problems in results if problems}
    assert bad == {}


def _mutate(data: bytes, name: str, fn) -> bytes:
    zin = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            content = zin.read(info)
            if info.filename == name:
                content = fn(content)
            if content is not None:
                zout.writestr(info.filename, content)
    return out.getvalue()


@pytest.fixture(scope="module")
def good(wordeval_cases):
    return wordeval_cases["atomic"][0]["reference_docx"]


def test_gates_catch_schema_order(good):
    bad = _mutate(good, "word/document.xml",
                  lambda b: b.replace(b"<w:body>", b"<w:body><w:p><w:r><w:t>x</w:t></w:r><w:pPr/></w:p>", 1))
    problems = gate_docx(bad)
    assert any(p.startswith("xsd word/document.xml") for p in problems)


def test_gates_catch_broken_ids_relationships_and_fields(good, wordeval_cases):
    bad = _mutate(good, "word/document.xml", lambda b: b.replace(
        b"<w:body>", b'<w:body><w:p><w:bookmarkStart w:id="77" w:name="a"/><w:r><w:fldChar w:fldCharType="begin"/>'
                     b'</w:r><w:r><w:t>x\nnewline</w:t></w:r><w:commentReference w:id="9"/></w:p>', 1))
    problems = " | ".join(check_package(Package.from_bytes(bad)))
    assert "bookmarkStart 77 without bookmarkEnd" in problems
    assert "not ended" in problems
    assert "literal newline" in problems
    assert "comment 9 referenced" in problems
    no_rel = _mutate(good, "word/_rels/document.xml.rels",
                     lambda b: b.replace(b'Target="styles.xml"', b'Target="missing.xml"'))
    assert any("targets missing part" in p for p in gate_docx(no_rel))
    import re
    link = next(c for c in wordeval_cases["atomic"] if c["unit_id"] == "hyperlink_add")["reference_docx"]
    dangling = _mutate(link, "word/_rels/document.xml.rels",
                       lambda b: re.sub(rb'<Relationship [^>]*TargetMode="External"/>', b"", b))
    assert any("has no relationship" in p for p in gate_docx(dangling))
    no_ct = _mutate(good, "[Content_Types].xml", lambda b: re.sub(
        rb'<Override PartName="/word/document.xml"[^>]*/>', b"", b.replace(b'Extension="xml"', b'Extension="xmlx"')))
    assert any(p.startswith("content types: no content type") for p in gate_docx(no_ct))


def test_gates_catch_duplicate_drawing_ids(wordeval_cases):
    import copy
    from benchwright.formats.ooxml.ns import qn
    from benchwright.wordeval.docmodel import WordDoc
    case = next(c for c in wordeval_cases["atomic"] if c["unit_id"] == "picture_add")
    assert gate_docx(case["reference_docx"]) == []
    wd = WordDoc(case["reference_docx"])
    p = next(d for d in wd.body.iter(qn("wp:docPr"))).getparent()
    while p.tag != qn("w:p"):
        p = p.getparent()
    p.addnext(copy.deepcopy(p))                      # same picture twice: same wp:docPr id
    assert any("duplicate drawing id" in x for x in gate_docx(wd.to_bytes()))


needs_lo = pytest.mark.skipif(not libreoffice.available(), reason="LibreOffice (soffice) not installed")


@needs_lo
def test_libreoffice_opens_a_sample_in_one_batch(wordeval_cases):
    files = list(_unique_files(wordeval_cases).values())
    sample = dict(files[:: max(1, len(files) // 20)][:20])
    sample["not-a-docx"] = b"this is not a document"
    res = libreoffice.libreoffice_gate(sample)
    assert res.pop("not-a-docx")                      # LibreOffice refuses garbage (import filter forced)
    assert len(res) == 20 and all(v == [] for v in res.values()), {k: v for k, v in res.items() if v}
    # the profile was made knowing the installed version: soffice did not take it for an older version's and
    # run its graphics render self-tests (about half of a batch's CPU), which leave this log
    user = Path(libreoffice._profile_url().removeprefix("file://")) / "user"
    assert "ooSetupLastVersion" in (user / "registrymodifications.xcu").read_text(encoding="utf-8")
    assert not (user / "GraphicsRenderTests.log").exists()


@needs_lo
def test_libreoffice_profile_is_removed_when_the_process_exits(tmp_path):
    # the per-process LibreOffice profile is reused across calls, then deleted at exit
    import subprocess
    import sys
    code = ("import sys; from benchwright.formats.ooxml import libreoffice as lo; "
            "print(lo._profile_url()); lo.convert_many({'a': open(sys.argv[1], 'rb').read()})")
    sample = tmp_path / "a.docx"
    import docx
    document = docx.Document()
    document.add_paragraph("profile test")
    document.save(sample)
    out = subprocess.run([sys.executable, "-c", code, str(sample)], capture_output=True, text=True, check=True)
    profile = out.stdout.strip().removeprefix("file://")
    assert "benchwright-lo-" in profile
    assert not os.path.exists(profile)


def test_a_forked_child_exiting_normally_leaves_its_parents_profiles():
    # a child inherits the exit hooks and the profile table: its exit must not delete the parent's profile
    profile = libreoffice._profile_url().removeprefix("file://")
    pid = os.fork()
    if pid == 0:  # the child: what a normal exit runs, then out without the rest of pytest's teardown
        libreoffice._remove_profiles()
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    assert os.path.isdir(profile)


@needs_lo
def test_libreoffice_resave_of_reference_passes_where_declared():
    cat = load_catalogue()
    cases = {}
    # a sample across subsystems, one soffice call: every tenth unit whose property survives, built
    # on the first synthetic base document it applies to (the plan puts most units on real ones)
    for uid in sorted(u for u in cat.units if cat.units[u]["libreoffice_survives"])[::10]:
        for base in LIBREOFFICE_TEST_BASES:
            try:
                cases[uid] = build_case(uid, 0, base, cat)
                break
            except NotApplicable:
                continue
    ids = sorted(cases)
    assert len({cases[i]["subsystem"] for i in ids}) >= 8
    resaved = libreoffice.resave_docx({i: cases[i]["reference_docx"] for i in ids})
    failures = {}
    for i in ids:
        assert resaved[i] is not None, i
        assert resaved[i] != cases[i]["reference_docx"]
        rep = evaluate_docx(cases[i]["reference_docx"], resaved[i], json.loads(cases[i]["oracle"]),
                            extra_allowed=LIBREOFFICE_LOSSY)
        if not rep["passed"]:
            failures[i] = [(c["name"], c.get("differences", [])[:2]) for c in rep["checks"] if not c["passed"]]
    assert failures == {}


@needs_lo
def test_the_pipelines_libreoffice_stage_converts_a_file_an_earlier_batch_converted_only_once(wordeval_cases,
                                                                                                monkeypatch):
    from benchwright.records import Reject
    from benchwright.wordeval.stages import libreoffice_gate

    real, converted = libreoffice._run, []

    def counted(args, timeout):  # the real soffice run; the files it was given noted
        converted.append([a for a in args if a.endswith(".docx")])
        return real(args, timeout)

    monkeypatch.setattr(libreoffice, "_run", counted)
    cases = [{k: c[k] for k in ("case_id", "input_docx", "reference_docx")} for c in wordeval_cases["atomic"][:2]]
    memo: dict = {}
    first = list(libreoffice_gate(cases, "atomic_case", memo))
    assert first == cases and len(converted) == 1 and len(converted[0]) == len(memo) >= 2
    garbage = {**cases[0], "case_id": "garbage", "reference_docx": b"not a document"}
    second = list(libreoffice_gate([*cases, garbage], "atomic_case", memo))
    assert len(converted) == 1                       # nothing new to convert: soffice did not start
    assert second[:2] == cases and isinstance(second[2], Reject) and "not a .docx" in second[2].reason
