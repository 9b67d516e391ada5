"""Structural checks Word performs and the schema does not: ids, relationships, content types,
field balance, and the handful of content rules that make Word refuse a file.

Each function takes a :class:`benchwright.formats.ooxml.package.Package` and returns a list of problem
strings (empty = fine).
"""
from __future__ import annotations

from collections import Counter

from benchwright.formats.ooxml.ns import CT, NS, qn
from benchwright.formats.ooxml.package import Package, rels_name

_R = NS["r"]

STORY_TYPES = {CT.DOCUMENT, CT.DOCUMENT_MACRO, CT.HEADER, CT.FOOTER, CT.FOOTNOTES, CT.ENDNOTES, CT.COMMENTS,
               "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"}
REVISION_TAGS = tuple(qn("w:" + t) for t in (
    "ins", "del", "moveFrom", "moveTo", "rPrChange", "pPrChange", "sectPrChange", "tblPrChange", "trPrChange",
    "tcPrChange", "tblGridChange", "numberingChange", "cellIns", "cellDel", "cellMerge"))


def story_parts(pkg: Package) -> list[str]:
    return [n for n in pkg.members if n.endswith(".xml") and pkg.content_type(n) in STORY_TYPES]


def check_content_types(pkg: Package) -> list[str]:
    problems = []
    if "[Content_Types].xml" not in pkg.members:
        return ["content types: [Content_Types].xml missing"]
    for name in pkg.members:
        if name == "[Content_Types].xml":
            continue
        if pkg.content_type(name) is None:
            problems.append(f"content types: no content type for {name}")
    root = pkg.xml("[Content_Types].xml")
    for el in root.findall(qn("ct:Override")):
        part = (el.get("PartName") or "").lstrip("/")
        if not any(part.lower() == n.lower() for n in pkg.members):
            problems.append(f"content types: override for missing part {part}")
    try:
        main = pkg.main_part()
        if pkg.content_type(main) not in (CT.DOCUMENT, CT.DOCUMENT_MACRO,
                                          "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"):
            problems.append(f"content types: main part {main} has content type {pkg.content_type(main)}")
    except Exception as exc:  # noqa: BLE001 - reported as a problem
        problems.append(f"content types: {exc}")
    return problems


def check_relationships(pkg: Package) -> list[str]:
    problems = []
    lower_members = {n.lower() for n in pkg.members}
    for name in pkg.members:
        if not name.endswith(".rels"):
            continue
        d, f = name.rsplit("/", 1) if "/" in name else ("", name)
        source_dir = d[: -len("_rels")].rstrip("/") if d.endswith("_rels") else d
        source = (source_dir + "/" if source_dir else "") + f[: -len(".rels")]
        if name != "_rels/.rels" and source.lower() not in lower_members:
            problems.append(f"relationships: {name} belongs to missing part {source}")
        rels = pkg.relationships("" if name == "_rels/.rels" else source)
        for rid, n in Counter(r.rid for r in rels).items():
            if n > 1:
                problems.append(f"relationships: duplicate id {rid} in {name}")
        for r in rels:
            if not r.external and (r.target_part or "").lower() not in lower_members:
                problems.append(f"relationships: {name}#{r.rid} targets missing part {r.target_part}")
    # every r:* reference in an XML part resolves in that part's relationships
    for name in pkg.members:
        if not name.endswith(".xml") or name == "[Content_Types].xml":
            continue
        data = pkg.members[name] if name in pkg.members else pkg.get(name)
        if _R.encode() not in data:
            continue
        root = pkg.xml(name)
        prefixes = [p for p, uri in root.nsmap.items() if uri == _R and p]
        if prefixes and not any(f" {p}:".encode() in data for p in prefixes):
            continue   # the namespace is declared but no attribute uses it (styles, settings, ...)
        rids = set(pkg.rel_map(name))
        for attr in root.xpath("//@*[namespace-uri()=$ns]", ns=_R):
            val = str(attr)
            if val and val not in rids:
                el = attr.getparent()
                problems.append(f"relationships: {name} <{el.tag.rsplit('}', 1)[-1]} "
                                f"r:{attr.attrname.rsplit('}', 1)[-1]}={val!r}> has no relationship")
    return problems


def _ids(root, tag: str) -> list[str]:
    return [el.get(qn("w:id")) for el in root.iter(qn(tag))]


def check_ids(pkg: Package) -> list[str]:
    problems = []
    stories = story_parts(pkg)
    try:
        main = pkg.main_part()
    except Exception:  # noqa: BLE001
        return problems
    problems += _bookmark_problems(pkg, stories)
    # comments, footnotes, endnotes referenced from stories exist in their parts
    comments, cpart = _defined_ids(pkg, main, "comments", "w:comment", problems)
    footnotes, _ = _defined_ids(pkg, main, "footnotes", "w:footnote", problems)
    endnotes, _ = _defined_ids(pkg, main, "endnotes", "w:endnote", problems)
    drawing_ids = Counter()
    revision_ids = Counter()
    for part in stories:
        root = pkg.xml(part)
        cstarts = set(_ids(root, "w:commentRangeStart"))
        cends = set(_ids(root, "w:commentRangeEnd"))
        for cid in cstarts ^ cends:
            problems.append(f"ids: unmatched comment range {cid} in {part}")
        for cid in cstarts | cends | set(_ids(root, "w:commentReference")):
            if cid not in comments:
                problems.append(f"ids: comment {cid} referenced in {part} but not defined"
                                + ("" if cpart else " (no comments part)"))
        for fid in _ids(root, "w:footnoteReference"):
            if fid not in footnotes:
                problems.append(f"ids: footnote {fid} referenced in {part} but not defined")
        for eid in _ids(root, "w:endnoteReference"):
            if eid not in endnotes:
                problems.append(f"ids: endnote {eid} referenced in {part} but not defined")
        for el in root.iter(qn("wp:docPr")):
            drawing_ids[el.get("id")] += 1
        for tag in REVISION_TAGS:
            for el in root.iter(tag):
                rid = el.get(qn("w:id"))
                if rid is not None:
                    revision_ids[rid] += 1
                elif tag in (qn("w:ins"), qn("w:del")) and el.getparent().tag != qn("w:rPr"):
                    problems.append(f"ids: revision <{tag.rsplit('}', 1)[-1]}> without w:id in {part}")
    for did, n in drawing_ids.items():
        if n > 1:
            problems.append(f"ids: duplicate drawing id {did} ({n} times)")
    for rid, n in revision_ids.items():
        if n > 1:
            problems.append(f"ids: duplicate revision id {rid} ({n} times)")
    return problems + _numbering_problems(pkg, main, stories)


def _bookmark_problems(pkg: Package, stories) -> list[str]:
    """Bookmarks paired per part, their names unique in the document."""
    problems = []
    names = Counter()
    for part in stories:
        root = pkg.xml(part)
        starts = _ids(root, "w:bookmarkStart")
        ends = set(_ids(root, "w:bookmarkEnd"))
        for bid, n in Counter(starts).items():
            if n > 1:
                problems.append(f"ids: duplicate bookmark id {bid} in {part}")
        for bid in set(starts) - ends:
            problems.append(f"ids: bookmarkStart {bid} without bookmarkEnd in {part}")
        for bid in ends - set(starts):
            problems.append(f"ids: bookmarkEnd {bid} without bookmarkStart in {part}")
        for el in root.iter(qn("w:bookmarkStart")):
            names[el.get(qn("w:name"))] += 1
    for nm, n in names.items():
        if n > 1:
            problems.append(f"ids: bookmark name {nm!r} used {n} times")
    return problems


def _defined_ids(pkg: Package, main: str, reltail: str, tag: str, problems: list[str]) -> tuple[set[str], str | None]:
    """(ids, part) of the ``tag`` elements of the main part's ``reltail`` part (comments, footnotes,
    endnotes); a repeated id is appended to ``problems``."""
    parts = pkg.related(main, reltail)
    if not parts:
        return set(), None
    root = pkg.xml(parts[0])
    ids = _ids(root, tag)
    for i, n in Counter(ids).items():
        if n > 1:
            problems.append(f"ids: duplicate {tag} id {i} in {parts[0]}")
    return set(ids), parts[0]


def _numbering_problems(pkg: Package, main: str, stories) -> list[str]:
    """Every w:num refers to an abstractNum, every numId used in a story or style to a w:num."""
    problems = []
    numparts = pkg.related(main, "numbering")
    nums, abstracts = set(), set()
    if numparts:
        nroot = pkg.xml(numparts[0])
        abstracts = {el.get(qn("w:abstractNumId")) for el in nroot.findall(qn("w:abstractNum"))}
        for num in nroot.findall(qn("w:num")):
            nums.add(num.get(qn("w:numId")))
            a = num.find(qn("w:abstractNumId"))
            if a is None or a.get(qn("w:val")) not in abstracts:
                problems.append(f"ids: w:num {num.get(qn('w:numId'))} refers to a missing abstractNum")
    style_parts = pkg.related(main, "styles")
    sroots = [pkg.xml(p) for p in style_parts]
    for root in [pkg.xml(p) for p in stories] + sroots:
        for el in root.iter(qn("w:numId")):
            v = el.get(qn("w:val"))
            if v not in (None, "0") and v not in nums:
                problems.append(f"ids: numId {v} used but not defined in numbering")
    return problems


def check_fields(pkg: Package) -> list[str]:
    """Complex fields balanced: begin [instr] [separate] end, properly nested, per story part."""
    problems = []
    for part in story_parts(pkg):
        root = pkg.xml(part)
        stack: list[dict] = []
        for el in root.iter(qn("w:fldChar"), qn("w:instrText")):
            if el.tag == qn("w:instrText"):
                if not stack:
                    problems.append(f"fields: instrText outside a field in {part}")
                continue
            kind = el.get(qn("w:fldCharType"))
            if kind == "begin":
                stack.append({"sep": False})
            elif kind == "separate":
                if not stack:
                    problems.append(f"fields: separate without begin in {part}")
                elif stack[-1]["sep"]:
                    problems.append(f"fields: two separates in one field in {part}")
                else:
                    stack[-1]["sep"] = True
            elif kind == "end":
                if not stack:
                    problems.append(f"fields: end without begin in {part}")
                else:
                    stack.pop()
            else:
                problems.append(f"fields: fldChar with type {kind!r} in {part}")
        if stack:
            problems.append(f"fields: {len(stack)} field(s) not ended in {part}")
    return problems


def check_content(pkg: Package) -> list[str]:
    """Word-only failures: cells without a final paragraph, tables without grid, newlines in w:t."""
    problems = []
    for part in story_parts(pkg):
        root = pkg.xml(part)
        for tc in root.iter(qn("w:tc")):
            blocks = [c for c in tc if isinstance(c.tag, str) and c.tag != qn("w:tcPr")]
            if not blocks or blocks[-1].tag != qn("w:p"):
                problems.append(f"content: table cell without a final paragraph in {part}")
                break
        for tbl in root.iter(qn("w:tbl")):
            if tbl.find(qn("w:tblGrid")) is None:
                problems.append(f"content: table without w:tblGrid in {part}")
            if tbl.find(qn("w:tr")) is None:
                problems.append(f"content: table without rows in {part}")
        for t in root.iter(qn("w:t"), qn("w:instrText"), qn("w:delText")):
            if t.text and ("\n" in t.text or "\r" in t.text):
                problems.append(f"content: literal newline in <{t.tag.rsplit('}', 1)[-1]}> in {part}")
                break
    return problems


def check_package(pkg: Package) -> list[str]:
    problems = []
    for fn in (check_content_types, check_relationships, check_ids, check_fields, check_content):
        problems.extend(fn(pkg))
    return problems


__all__ = ["check_package", "check_content_types", "check_relationships", "check_ids", "check_fields",
           "check_content", "story_parts", "rels_name"]
