"""Real documents: the snapshot extractor and a self-comparison run on every python-docx fixture."""
from __future__ import annotations

from benchwright.evaluation.wordeval import evaluate_docx
from benchwright.wordeval.snapshot import extract_snapshot, snapshot_dict

FIXTURE_SUBDIR = ("docx", "python-docx")


def _fixtures(fixtures_dir):
    d = fixtures_dir.joinpath(*FIXTURE_SUBDIR)
    files = sorted(d.glob("*.docx"))
    assert len(files) >= 40
    return files


def test_snapshot_and_self_compare_on_every_fixture(fixtures_dir):
    oracle = {"targets": [], "allowed_side_effects": [], "tolerance": {}}
    for path in _fixtures(fixtures_dir):
        data = path.read_bytes()
        snap = extract_snapshot(data, path.name)
        flat = snapshot_dict(snap)
        assert flat["sections/count"] >= 1, path.name
        assert "body/count" in flat, path.name
        rep = evaluate_docx(data, data, oracle, case_id=path.name)
        assert rep["passed"], (path.name, [c for c in rep["checks"] if not c["passed"]])


def test_fixture_content_is_read(fixtures_dir):
    d = fixtures_dir.joinpath(*FIXTURE_SUBDIR)
    snap = extract_snapshot((d / "par-hlink-frags.docx").read_bytes())
    p = [p for p in snap.stories["body"] if p.text.startswith("Three with link")][0]
    assert p.chars["link"][0][2] == "https://foo.com/"
    assert snap.bookmarks["linkedBookmark"]["text"] == "bookmark referred to by prior link"
    hdr = extract_snapshot((d / "hdr-header-footer.docx").read_bytes())
    assert hdr.stories["header/S0/default"][0].text == "Header for section-1"
    assert hdr.sections[1]["hf"]["header.default"]["linked"] is True       # inherited by section 2
    tbl = extract_snapshot((d / "tbl-cell-props.docx").read_bytes())
    assert tbl.tables[0]["cells"][2][0]["gridSpan"] == 2
    sty = extract_snapshot((d / "txt-font-props.docx").read_bytes())
    large = [p for p in sty.stories["body"] if p.style == "large size"][0]
    assert large.chars["sz"][0][2] == 36                                     # from the paragraph style


def test_a_fixture_edit_is_detected(fixtures_dir):
    from benchwright.wordeval import ops
    from benchwright.wordeval.docmodel import WordDoc
    data = fixtures_dir.joinpath(*FIXTURE_SUBDIR, "par-alignment.docx").read_bytes()
    wd = WordDoc(data)
    ops.apply(wd, "set_line_spacing", {"paragraph": "Right aligned."}, {"spacing": "double"})
    rep = evaluate_docx(data, wd.to_bytes(), {"targets": [], "allowed_side_effects": []})
    diffs = [d["key"] for c in rep["checks"] if c["name"] == "preservation" for d in c["differences"]]
    assert not rep["passed"] and "body/P3/para.spacing.line" in diffs
