"""WordEval's hostile corpus (``tests/hostile/__init__.py`` says what a hook declares): unit and template ids
that name case folders, catalogues refused whole, and what the evaluator reads (an agent's edited .docx,
case folders)."""
from __future__ import annotations

import functools
import io
import json
import os
import shutil
import zipfile
from pathlib import Path

from tests.hostile import (BILLION_LAUGHS, EXTERNAL_ENTITY, KEPT, REFUSED, YAML_BOMB, Case, Corpus, CorpusBuild,
                           huge_integer, strict_ooxml, undecodable_name, with_members, zip_bytes)

# A build's own growth is well below it (docs/RELIABILITY.md lists the measured peaks): the catalogue's bombs are
# refused before a case is built
PEAK_LIMIT_MB = 600

NOT_APPLICABLE = {
    "truncated and corrupt images": "a build reads YAML only (base documents and images ship in the package)",
    "NaN and infinite numbers": "as a refusal: YAML .nan in a unit's value is a quarantined case "
                                "(the contract's planted bad record)",
    "cyclic dependency graphs": "compositions list steps, no graph",
}


def corpus(work: Path, fixtures: Path) -> Corpus:
    """The ids catalogue, built with the units of the file the ids were added to and the composition's steps,
    one seed (a third of the tiny catalogue's cases), and no LibreOffice gate (the names are under test)."""
    from benchwright import registry
    from benchwright.wordeval.sources import read_catalogue

    root, cases = write_wordeval_ids(work / "catalogue")
    cat = read_catalogue(str(root))
    steps = {step["unit"] for template in cat.templates.values() for step in template["steps"]}
    dataset = registry.get("wordeval").configured(
        libreoffice_gate="none", seeds=(0,),
        unit_ids=tuple(sorted(u for u, unit in cat.units.items()
                              if unit["source"] == "units/01_character_formatting.yaml" or u in steps)))
    return Corpus(root, cases, dataset=dataset)


def refusals(root: Path) -> list[tuple[Case, object]]:
    """Through the source parser the build calls first (``read_catalogue``); ``check_a_refused_catalogue_
    publishes_nothing`` takes one through the build."""
    from benchwright.wordeval.sources import read_catalogue

    def run(path: Path):
        return lambda out: read_catalogue(str(path))

    return [(case, run(path)) for case, path, _ in refusals_wordeval(root)]


@functools.lru_cache(maxsize=1)
def good_case() -> dict:
    """A real case (font_bold on the report), whose reference is the good document the cases damage."""
    from benchwright.wordeval.cases import build_case

    return build_case("font_bold", 0, "report")


def other_cases(root: Path, fixtures: Path, build: CorpusBuild) -> list[Case]:
    return [case for case, _ in wordeval_docx_cases(good_case()["reference_docx"])]


def evaluator_cases(root: Path, fixtures: Path) -> list[tuple[Case, object]]:
    return wordeval_case_folder_cases(root, good_case())


OOXML_CT = (b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            b'<Default Extension="xml" ContentType="application/xml"/></Types>')


def declared_parts(package: bytes, overrides: dict[str, str] | None = None,
                   relationships: dict[str, tuple[str, str]] | None = None) -> tuple[bytes, bytes]:
    """The package's ``[Content_Types].xml`` with ``overrides`` ({part name: content type}) and its
    document relationships with ``relationships`` ({id: (type, target)}) added."""
    zin = zipfile.ZipFile(io.BytesIO(package))
    ct = zin.read("[Content_Types].xml").replace(b"</Types>", b"".join(
        b'<Override PartName="%s" ContentType="%s"/>' % (name.encode(), kind.encode())
        for name, kind in (overrides or {}).items()) + b"</Types>")
    rels = zin.read("word/_rels/document.xml.rels").replace(b"</Relationships>", b"".join(
        b'<Relationship Id="%s" Type="%s" Target="%s"/>' % (rid.encode(), kind.encode(), target.encode())
        for rid, (kind, target) in (relationships or {}).items()) + b"</Relationships>")
    return ct, rels


def wordeval_docx_cases(good: bytes) -> list[tuple[Case, bytes]]:
    """An agent's edited .docx as the evaluator reads it (``benchwright evaluate wordeval``, the harness):
    every case is refused by name (``rejected`` starts with the reason), nothing expanded or executed."""
    import warnings

    def case(name, reason):
        return Case("wordeval", "edited .docx (evaluator input)", name, "", reason, outcome=REFUSED)

    bomb = zip_bytes({"[Content_Types].xml": OOXML_CT, "word/document.xml": b"<a>" + b" " * (200 << 20) + b"</a>"})
    billion = BILLION_LAUGHS.replace(b"<lolz>&lol9;</lolz>", b'<w:document xmlns:w="http://schemas.openxmlformats.org/'
                                                            b'wordprocessingml/2006/main">&lol9;</w:document>')
    xxe = EXTERNAL_ENTITY.replace(b"<d>&x;</d>", b'<w:document xmlns:w="http://schemas.openxmlformats.org/'
                                                 b'wordprocessingml/2006/main">&x;</w:document>')
    dup = io.BytesIO()
    with zipfile.ZipFile(dup, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns about the duplicate it writes
        zf.writestr("[Content_Types].xml", OOXML_CT)
        zf.writestr("word/document.xml", b"<a/>")
        zf.writestr("word/document.xml", b"<b/>")
    ct, _ = declared_parts(good, overrides={"/word/vbaProject.bin": "application/vnd.ms-office.vbaProject"})
    _, rels = declared_parts(good, relationships={
        "rId99": ("http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk", "evil.html")})
    custom = EXTERNAL_ENTITY.replace(b"<d>&x;</d>", b'<root xmlns="urn:example">&x;</root>').replace(b"DOCTYPE d", b"DOCTYPE r")
    return [
        (case("zip bomb (200 MiB document part)", "zip_bomb"), bomb),
        (case("billion laughs in document.xml", "doctype"), with_members(good, {"word/document.xml": billion})),
        (case("external entity in document.xml", "doctype"), with_members(good, {"word/document.xml": xxe})),
        (case("DOCTYPE in a customXml part", "doctype"), with_members(good, {"customXml/item1.xml": custom})),
        (case("too many members", "too_many_members"),
         zip_bytes({"[Content_Types].xml": OOXML_CT, **{f"f{i}.xml": b"<a/>" for i in range(1200)}})),
        (case("path traversal member", "path_traversal"), zip_bytes({"[Content_Types].xml": OOXML_CT, "../../evil.xml": b"<a/>"})),
        (case("absolute member path", "absolute_path"), zip_bytes({"[Content_Types].xml": OOXML_CT, "/etc/evil.xml": b"<a/>"})),
        (case("duplicate member", "duplicate_member"), dup.getvalue()),
        (case("not a zip", "not_a_zip"), b"%PDF-1.4 definitely not a docx"),
        (case("truncated", "not_a_zip"), good[: len(good) // 2]),
        (case("encrypted (an OLE container)", "encrypted"), b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 4000),
        (case("macro-enabled (vbaProject.bin)", "active content"),
         with_members(good, {"word/vbaProject.bin": b'Attribute VB_Name = "evil"', "[Content_Types].xml": ct})),
        (case("altChunk (embedded HTML)", "active content"),
         with_members(good, {"word/_rels/document.xml.rels": rels, "word/evil.html": b"<html/>"})),
        (case("Strict OOXML namespaces", "strict"), strict_ooxml(good)),
    ]


def refusals_wordeval(root: Path) -> list[tuple[Case, Path, list]]:
    """Catalogue folders (``benchwright build wordeval --source``) the build refuses whole, naming the
    file: the catalogue is one declarative plan, read before any case is built (a bad value inside a
    well-formed unit is a quarantined case: the contract's planted record)."""
    from benchwright.wordeval.synth import write_source

    out = []
    fmt = "catalogue YAML"

    template = root / "tiny"
    write_source(template, scale="tiny")

    def source(name, reason, locator, edit):
        folder = root / f"refused_{len(out):02d}"
        shutil.copytree(template, folder)
        edit(folder)
        out.append((Case("wordeval", fmt, name, locator, reason, outcome=REFUSED), folder, []))

    def write(rel, data):
        return lambda folder: (folder / rel).write_bytes(data if isinstance(data, bytes) else data.encode())

    source("malformed YAML", "malformed catalogue YAML", "properties.yaml", write("properties.yaml", "properties: [\n"))
    source("YAML alias bomb", "alias *a is not allowed", "instructions.yaml",
           write("instructions.yaml", YAML_BOMB + "families: {}\n"))
    source("wrong YAML type: properties is a list", "expected a mapping", "properties.yaml",
           write("properties.yaml", "properties: 5\n"))
    source("huge value: a 5000-digit integer", "Exceeds the limit", "basedocs.yaml",
           write("basedocs.yaml", f"basedocs: {{x: {huge_integer()}}}\n"))
    source("not UTF-8", "compositions.yaml:1: not UTF-8 (byte 0xff", "compositions.yaml",
           write("compositions.yaml", b"templates: [\xff]\n"))

    def unit_edit(change):
        def edit(folder):
            path = sorted((folder / "units").glob("*.yaml"))[0]
            import yaml

            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
            change(doc)
            path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        return edit

    source("a unit without its id", "#units[0] (line 3): unit 'None': missing field 'id'", "units/",
           unit_edit(lambda d: d["units"][0].pop("id")))
    source("wrong YAML type: a unit is a string", "#units[", "units/", unit_edit(lambda d: d["units"].append("unit")))
    source("duplicate unit id", "duplicate unit id", "", unit_edit(
        lambda d: d["units"].append(json.loads(json.dumps(d["units"][0])))))
    source("a missing part", "missing instructions.yaml", "instructions.yaml",
           lambda folder: (folder / "instructions.yaml").unlink())

    def repeat_property(folder):  # Font.Bold given again with Font.StrikeThrough's entry: PyYAML kept the second
        import yaml

        path = folder / "properties.yaml"
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in doc["properties"].items()]
        lines.append(f"  {json.dumps('Font.Bold')}: {json.dumps(doc['properties']['Font.StrikeThrough'])}")
        rest = {k: v for k, v in doc.items() if k != "properties"}
        path.write_text((yaml.safe_dump(rest) if rest else "") + "properties:\n" + "\n".join(lines) + "\n",
                        encoding="utf-8")

    source("a repeated key (Font.Bold given twice, the second a strike-through's)", "duplicate key 'Font.Bold'",
           "properties.yaml", repeat_property)
    source("100,000-deep nesting", "nested more than 100 levels deep", "units/",
           lambda folder: (folder / "units" / "zz_deep.yaml").write_text("units: " + "[" * 100_000 + "]" * 100_000))

    def link(name, target):
        return lambda folder: os.symlink(target(folder) if callable(target) else target, folder / "units" / name)

    outside = root / "outside_unit.yaml"
    shutil.copy(sorted((template / "units").glob("*.yaml"))[0], outside)
    source("symlink escape: a unit file linked out of the catalogue", "symlink to a place outside the catalogue",
           "units/zz_escape.yaml", link("zz_escape.yaml", str(outside)))
    source("symlink loop", "is a symlink loop", "units/zz_loop.yaml", link("zz_loop.yaml", "zz_loop.yaml"))
    source("dangling symlink", "is a dangling symlink", "units/zz_gone.yaml", link("zz_gone.yaml", "missing.yaml"))
    # root reads any mode, so permissions cannot show an unreadable file: a folder named like a unit file
    source("unreadable (a folder)", "unreadable catalogue file", "zz_folder.yaml",
           lambda folder: (folder / "units" / "zz_folder.yaml").mkdir())
    source("undecodable file name", "is not valid UTF-8", "units/zz\\xffbad.yaml",
           lambda folder: undecodable_name(folder / "units", b"zz\xffbad.yaml", b"units: []\n"))
    return out


def write_wordeval_ids(root: Path) -> tuple[Path, list[Case]]:
    """The tiny catalogue with units and a composition template whose ids become case ids, and so the names of
    case folders (``exports/cases/<case_id>``) and of the files tools name after them: ids that would leave
    that folder or not fit a file name are quarantined case by case naming the catalogue file (before, a
    ``../`` unit id wrote input.docx, reference.docx and case.json outside the build and it published);
    ids with spaces, quotes, a leading dash, dots, non-ASCII are kept, and their folders evaluate back."""
    import yaml

    from benchwright.wordeval.synth import write_source

    write_source(root, scale="tiny")
    path = sorted((root / "units").glob("*.yaml"))[0]
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    good = doc["units"][0]
    refused = {"../../escape": "holds '/'", "/tmp/absolute": "holds '/'", "nested/unit": "holds '/'",
               "w" * 240: "need 19 bytes more", "u" * 300: "has a name of 3", "bold\0unit": "holds a NUL byte",
               "bold\ud800unit": "holds a lone surrogate"}
    doc["units"] += [dict(json.loads(json.dumps(good)), id=uid) for uid in [*refused, *HOSTILE_UNIT_IDS]]
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    comp = yaml.safe_load((root / "compositions.yaml").read_text(encoding="utf-8"))
    comp["templates"].append(dict(json.loads(json.dumps(comp["templates"][0])), id="../escape_template"))
    (root / "compositions.yaml").write_text(yaml.safe_dump(comp, sort_keys=False), encoding="utf-8")
    fmt = "catalogue ids (case folders)"
    # (a quarantine row is UTF-8 text: the surrogate in its locator is written repaired, U+FFFD, and counted)
    cases = [Case("wordeval", fmt, f"unit id {uid[:30]!r}{'...' if len(uid) > 30 else ''}".replace("\\x00", "\\0"),
                  f"{uid.replace(chr(0xD800), chr(0xFFFD))}@", reason, "atomic_case") for uid, reason in refused.items()]
    cases += [Case("wordeval", fmt, "template id '../escape_template'", "../escape_template@", "holds '/'",
                   "compositional_case")]
    cases += [Case("wordeval", fmt, f"unit id {uid!r}", f"{uid}@", "", "atomic_case", KEPT) for uid in HOSTILE_UNIT_IDS]
    return root, cases


# Unit ids a file name holds that tools trip on (the harness passes case paths to agents' commands)
HOSTILE_UNIT_IDS = ("bold with spaces", "-leading 'single' \"double\"", "..dots..", "ünïcødé 名前 %20")



def wordeval_case_folder_cases(root: Path, case: dict) -> list[tuple[Case, object]]:
    """Case folders (``exports/cases/<case_id>``) whose case.json or .docx is damaged, evaluated with the
    case's own reference as the output."""
    from benchwright.evaluation import wordeval as ev
    from benchwright.wordeval.cases import write_case_dir

    out = []

    def folder_case(name, reason, edit, file="case.json", locator_tail=""):
        folder = write_case_dir(case, root / f"{len(out):02d}" / case["case_id"])
        edit(folder)

        def run():
            ev.evaluate_case(folder, case["reference_docx"], isolate=False)
            return []

        out.append((Case("wordeval", "case folder (evaluator input)", name, f"{folder}/{file}{locator_tail}", reason,
                         outcome=REFUSED), run))

    def text(change):
        return lambda folder: (folder / "case.json").write_text(change((folder / "case.json").read_text()))

    folder_case("a repeated key", "duplicate key 'oracle'", text(lambda t: t.replace('{\n', '{\n  "oracle": {},\n', 1)),
                locator_tail=":1")
    folder_case("a Latin-1 byte", "not UTF-8: byte 0xe9",
                lambda f: (f / "case.json").write_bytes((f / "case.json").read_bytes().replace(b"{", b"{\xe9", 1)),
                locator_tail=":1")
    folder_case("100,000-deep nesting", "nested deeper than the JSON decoder can follow",
                lambda f: (f / "case.json").write_text("[" * 100_000 + "]" * 100_000), locator_tail=":1")
    folder_case("cut JSON", "not valid JSON", text(lambda t: t[: len(t) // 2]))
    folder_case("no oracle", "a case is a JSON object with an 'oracle' object",
                text(lambda t: json.dumps({k: v for k, v in json.loads(t).items() if k != "oracle"})))
    folder_case("a list, not an object", "a case is a JSON object", lambda f: (f / "case.json").write_text("[]"))
    folder_case("another case's reference.docx", "is not the",
                lambda f: (f / "reference.docx").write_bytes(case["input_docx"]), file="reference.docx")
    folder_case("no reference.docx", "cannot read", lambda f: (f / "reference.docx").unlink(), file="reference.docx")
    folder_case("no case.json", "cannot read", lambda f: (f / "case.json").unlink())
    return out



# --------------------------------------------------------------------------- checks


def check_ids_that_name_no_case_folder_are_quarantined_and_the_rest_read_back(build: CorpusBuild, tmp_path: Path,
                                                                               fixtures: Path):
    """A catalogue whose unit and template ids become case folder names: the ones that would leave
    exports/cases (``../``, ``/``), not fit a file name with the harness's suffixes, or that no file name can
    hold (300 characters, a NUL byte, a lone surrogate: before, ``File name too long`` stopped the build) are
    quarantined case by case naming the catalogue file, the other units build, nothing is written outside the
    build, and the kept ones (spaces, quotes, a leading dash, dots, non-ASCII) publish folders that the batch
    evaluator finds by case id and passes."""
    from benchwright.evaluation.wordeval import evaluate_outputs
    from tests.hostile import quarantine_rows

    built, work = build.built, build.source.parent
    rows = quarantine_rows(built)
    refused = [r for r in rows if "exports/cases/" in r["reason"]]
    assert refused and all("units/01_character_formatting.yaml" in r["reason"] or "compositions.yaml" in r["reason"]
                           for r in refused)
    # nothing outside the build: the work folder holds the catalogue and the output only
    assert sorted(p.name for p in work.iterdir()) == ["catalogue", "out"]
    assert not list(work.glob("**/escape*")) and not Path("/tmp/absolute--report--s0").exists()
    folders = {p.name: p for p in (built / "exports" / "cases").iterdir()}
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    for uid in HOSTILE_UNIT_IDS:
        mine = [name for name in folders if name.startswith(f"{uid}--")]
        assert mine, uid
        for name in mine:
            shutil.copy(folders[name] / "reference.docx", outputs / f"{name}.docx")
    result = evaluate_outputs(outputs, built / "exports" / "cases", isolate=False)
    summary = result["summary"]
    assert summary["n_cases"] == len(list(outputs.iterdir())) and summary["passed"] == summary["n_cases"], summary
    assert set(summary["per_case"]) == {p.stem for p in outputs.iterdir()}


def check_every_edited_docx_case_is_refused_by_name_in_bounded_memory(build: CorpusBuild, tmp_path: Path,
                                                                      fixtures: Path):
    from benchwright.evaluation import wordeval as ev
    from tests.hostile import BOMB_RSS_LIMIT_MB, peak_rss_growth_mb

    good = good_case()
    problems = []
    for case, data in wordeval_docx_cases(good["reference_docx"]):
        reports = []
        grown = peak_rss_growth_mb(lambda: reports.append(ev.evaluate_docx(
            good["reference_docx"], data, good["oracle"], case_id=case.name)))
        rep = reports[0]
        if rep["passed"] or not (rep["rejected"] or "").startswith(case.reason):
            problems.append(f"{case}: {rep['passed']}, {rep['rejected']!r}")
        if grown > BOMB_RSS_LIMIT_MB:
            problems.append(f"{case}: peak RSS grew {grown:.0f} MB")
    assert not problems, "\n".join(problems)


def check_a_refused_catalogue_publishes_nothing(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """The alias bomb through the build: refused naming the file before any case is built."""
    import re

    import pytest

    from benchwright.errors import SourceError
    from tests.builds import build_dataset

    case, path, _ = refusals_wordeval(tmp_path)[1]
    with pytest.raises(SourceError, match=re.escape(case.reason)):
        build_dataset("wordeval", path, tmp_path / "out")
    assert not (tmp_path / "out" / "wordeval").exists()
