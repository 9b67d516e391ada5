"""Implicit dependencies: inferred from names and contents, not written in a file.

:func:`implicit_edges` takes one workspace's scanned ``files`` rows (``path``, ``text_excerpt``,
``file_type``, ``sha256``, and the ``numbers`` and ``entities`` scan_file computes from the whole
text; without them the excerpt is read) and returns edge rows (``kind`` implicit) by three rules:

- ``version_chain`` (rule ``version.date`` / ``version.label`` / ``version.number``): files whose
  names differ only by a version mark -- a date (2024-03, 2024-03-05, 20240305, 2024Q1), a version
  (v2, rev3, version 1.1), a stage (draft < unmarked < revised < final), or a trailing number
  (tool_1, tool_2; see below) -- with the same extension, in folders that differ only by such marks
  (``sales/2024/03`` and ``sales/2024/04``). Each file points to the next newer one. Numbered
  files are versions in some task graphs (the release's tool_1.sh -> tool_2.sh) and siblings in
  many more (report_1, report_2 of one batch): by name alone the rule measured a precision of 0.015
  on the synthetic default source, so it runs only when asked (``numbered_series=True``).
- ``derived_from`` (rule ``shared_numbers``): a file that repeats at least ``MIN_SHARED_NUMBERS``
  distinctive numbers of another (at least half of the smaller file's), the source being the rawer
  file (data < spreadsheet < document); a derivation already implied through an intermediate file
  is left out (transitive reduction).
- ``same_entity`` (rule ``shared_entity``): files that name the same proper name (a run of two to
  four capitalised words written in the text of at least two files; a file also names it when its
  path holds the name's slug, as ``suppliers/cobalt_foods/quote.xlsx`` does). Undirected: the
  smaller path is ``src``.

A number or name found in more than ``MAX_DOCUMENT_FREQUENCY`` files says nothing about a pair
and is ignored. The result depends only on the set of rows, not their order.
"""
from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from itertools import combinations

import networkx as nx

from benchwright.workspace_bench.extract_common import logical_name

MIN_SHARED_NUMBERS = 3
MAX_DOCUMENT_FREQUENCY = 12
_DATE = re.compile(r"(?<!\d)(\d{4})(?:[-_.]?(0[1-9]|1[0-2])(?:[-_.]?(0[1-9]|[12]\d|3[01]))?|[-_ ]?[qQ]([1-4]))(?!\d)")
_VERSION = re.compile(r"^(?:v|ver|version|rev|r)(\d+)(?:[._-](\d+))?$")
_STAGES = {"draft": 0, "wip": 0, "initial": 0, "prelim": 0, "preliminary": 0, "old": 0, "orig": 0, "original": 0,
           "review": 1, "revised": 2, "revision": 2, "updated": 2, "update": 2, "new": 2, "edited": 2,
           "final": 3, "approved": 3, "signed": 3, "latest": 3, "release": 3}
_SPLIT = re.compile(r"[\s_\-.()\[\]]+")
# A number not inside a word or a decimal: (?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]), spelt so
# that the pattern begins with its first character (a minus or a digit; the look-behind comes after it):
# the regex engine then skips to the next candidate character instead of trying every position (1.3x
# faster on text; the same matches, tests/test_workspace_bench_fast_paths.py).
_NUMBER = re.compile(r"(?:-(?<![\w.]-)(?:\d{1,3}(?:,\d{3})+|\d+)|\d(?<![\w.]\d)(?:\d{0,2}(?:,\d{3})+|\d*))"
                     r"(?:\.\d+)?(?![\w])")
_CELL_SEPARATORS = re.compile(r"[,;\t|\n]")
MAX_NUMBERS = 2000
MAX_ENTITIES = 500
# Two to four capitalised words: \b[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+){1,3}\b, its leading word boundary written
# after the capital (no word character before it) so that the engine skips to capitals (2.8x faster)
_ENTITY = re.compile(r"[A-Z](?<!\w[A-Z])[a-z]+(?:[ \t]+[A-Z][a-z]+){1,3}\b")
_DATA_RANK = {"csv": 0, "tsv": 0, "json": 0, "jsonl": 0, "xml": 0, "yaml": 0, "sql": 0, "txt": 0, "log": 0,
              "xlsx": 1, "xls": 1, "ods": 1}
_YEARS = range(1900, 2101)


# --------------------------------------------------------------------------- version chains

def _is_version_component(part: str) -> bool:
    return bool(part.isdigit() or _VERSION.match(part.lower()) or part.lower() in _STAGES or _DATE.fullmatch(part))


def version_key(path: str) -> tuple[tuple, tuple, str]:
    """(group, order, strength) of a file name: files of one group are versions of each other, ``order``
    sorts them oldest first; strength is "date", "label", "number" or "" (no version mark)."""
    folder, name = posixpath.split(path)
    stem, ext = posixpath.splitext(logical_name(name).lower())
    date = ()
    strength = ""
    m = _DATE.search(stem)
    if m:
        year, month, day, quarter = m.groups()
        date = (int(year), int(month or (int(quarter) * 3 if quarter else 0)), int(day or 0))
        stem = stem[:m.start()] + " " + stem[m.end():]
        strength = "date"
    tokens = [t for t in _SPLIT.split(stem) if t]
    stage, version, number, rest = 1, (0, 0), -1, []
    for i, token in enumerate(tokens):
        v = _VERSION.match(token)
        if v:
            version, strength = (int(v.group(1)), int(v.group(2) or 0)), strength or "label"
        elif token in _STAGES:
            stage, strength = max(stage, _STAGES[token]) if stage != 1 else _STAGES[token], strength or "label"
        elif token.isdigit() and i == len(tokens) - 1 and len(token) <= 4 and rest:
            number, strength = int(token), strength or "number"
        else:
            rest.append(token)
    parts = tuple(p for p in folder.split("/") if p and not _is_version_component(p))
    return (parts, tuple(rest), ext), (date, stage, version, number), strength


_CONFIDENCE = {"date": 0.85, "label": 0.9, "number": 0.5}


def version_chains(paths: list[str], numbered_series: bool = False) -> list[dict]:
    groups: dict[tuple, list[tuple[tuple, str, str]]] = defaultdict(list)
    for path in paths:
        group, order, strength = version_key(path)
        if strength == "number" and not numbered_series:
            continue
        if group[1]:
            groups[group].append((order, path, strength))
    edges = []
    for members in groups.values():
        if len(members) < 2 or not any(s for _, _, s in members):
            continue
        members.sort()
        for (o1, a, s1), (o2, b, s2) in zip(members, members[1:]):
            if o1 == o2:
                continue  # the same version mark twice: two files, not two versions
            strength = s2 or s1
            edges.append(_edge(a, b, "version_chain", f"version.{strength}",
                               f"{posixpath.basename(a)} -> {posixpath.basename(b)}", _CONFIDENCE[strength],
                               reference=posixpath.basename(b)))
    return edges


# --------------------------------------------------------------------------- shared numbers

def _normalise_number(raw: str) -> str | None:
    raw = raw.replace(",", "").lstrip("-")
    if "." in raw:
        raw = raw.rstrip("0").rstrip(".")
    digits = raw.replace(".", "").lstrip("0")
    if len(digits) < 3 or ("." not in raw and len(digits) <= 4 and int(raw) in _YEARS):  # no int() of 5000 digits
        return None
    return raw


def distinctive_numbers(text: str, delimited: bool = False) -> set[str]:
    """Numbers with at least three significant digits, thousands separators removed; years left out.
    ``delimited`` (CSV, TSV): each cell is read alone, so ``535,123`` is two numbers, not one."""
    out = set()
    pieces = _CELL_SEPARATORS.split(text or "") if delimited else [text or ""]
    for piece in pieces:
        for m in _NUMBER.finditer(piece.strip() if delimited else piece):
            value = _normalise_number(m.group(0) if not delimited else m.group(0).replace(",", ""))
            if value:
                out.add(value)
                if len(out) >= MAX_NUMBERS:
                    return out
    return out


def text_features(text: str, file_type: str) -> dict:
    """What the implicit rules compare, from a file's whole extracted text (scan_file stores them on
    the row): its distinctive numbers and proper names, sorted."""
    return {"numbers": sorted(distinctive_numbers(text, file_type in ("csv", "tsv"))),
            "entities": sorted(entities(text))[:MAX_ENTITIES]}


def _numbers_of(row: dict) -> set[str]:
    if row.get("numbers") is not None:
        return set(row["numbers"])
    return distinctive_numbers(row.get("text_excerpt") or "", row.get("file_type") in ("csv", "tsv"))


def _entities_of(row: dict) -> set[str]:
    if row.get("entities") is not None:
        return set(row["entities"])
    return entities(row.get("text_excerpt") or "")


def _rank(row: dict) -> int:
    return _DATA_RANK.get(row.get("file_type") or "", 2)


def derived_edges(rows: list[dict]) -> list[dict]:
    numbers = {r["path"]: _numbers_of(r) for r in rows}
    by_number: dict[str, list[str]] = defaultdict(list)
    for path in sorted(numbers):
        for n in numbers[path]:
            by_number[n].append(path)
    shared: dict[tuple[str, str], set[str]] = defaultdict(set)
    for n, paths in by_number.items():
        if 2 <= len(paths) <= MAX_DOCUMENT_FREQUENCY:
            for a, b in combinations(paths, 2):
                shared[(a, b)].add(n)
    row_of = {r["path"]: r for r in rows}
    graph = nx.DiGraph()
    for (a, b), common in shared.items():
        if len(common) < MIN_SHARED_NUMBERS or len(common) < 0.5 * min(len(numbers[a]), len(numbers[b])):
            continue
        ra, rb = row_of[a], row_of[b]
        if ra.get("sha256") and ra.get("sha256") == rb.get("sha256"):
            continue  # a copy, not a derivation
        if _rank(ra) == _rank(rb):
            continue  # no rawer side: which repeats which is not decidable from the numbers
        src, dst = (a, b) if _rank(ra) < _rank(rb) else (b, a)
        graph.add_edge(src, dst, common=common)
    if nx.is_directed_acyclic_graph(graph):
        kept = set(nx.transitive_reduction(graph).edges)
    else:
        kept = set(graph.edges)
    edges = []
    for src, dst in sorted(kept):
        common = sorted(graph.edges[src, dst]["common"], key=lambda s: (len(s), s))
        confidence = min(0.95, 0.5 + 0.05 * len(common))
        edges.append(_edge(src, dst, "derived_from", "shared_numbers",
                           f"{len(common)} shared numbers: " + ", ".join(common[:8]), confidence,
                           reference=", ".join(common[:8])))
    return edges


# --------------------------------------------------------------------------- shared entities

def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")


def entities(text: str) -> set[str]:
    """Proper names in a text: runs of two to four capitalised words on one line."""
    return {" ".join(m.group(0).split()) for m in _ENTITY.finditer(text or "")}


def same_entity_edges(rows: list[dict]) -> list[dict]:
    in_text: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        for name in _entities_of(r):
            in_text[name].add(r["path"])
    names = {name: paths for name, paths in in_text.items() if 2 <= len(paths) <= MAX_DOCUMENT_FREQUENCY}
    members: dict[str, set[str]] = {name: set(paths) for name, paths in names.items()}
    # a path names an entity when the entity's slug words occur in a row among the path's words
    by_first_word: dict[str, list[tuple[list[str], str]]] = defaultdict(list)
    for name in names:
        words = _slug(name).split("_")
        by_first_word[words[0]].append((words, name))
    for r in rows:
        words = [w for w in _slug(r["path"]).split("_") if w]
        for i, word in enumerate(words):
            for slug_words, name in by_first_word.get(word, ()):
                if words[i:i + len(slug_words)] == slug_words:
                    members[name].add(r["path"])
    pairs: dict[tuple[str, str], tuple[float, str]] = {}
    for name in sorted(members):
        paths = sorted(members[name])
        if len(paths) > MAX_DOCUMENT_FREQUENCY:
            continue
        for a, b in combinations(paths, 2):
            both_text = a in in_text[name] and b in in_text[name]
            confidence = 0.8 if both_text else 0.6
            if pairs.get((a, b), (0.0, ""))[0] < confidence:
                pairs[(a, b)] = (confidence, name)
    return [_edge(a, b, "same_entity", "shared_entity", f"both name {name}", confidence, reference=name)
            for (a, b), (confidence, name) in sorted(pairs.items())]


# --------------------------------------------------------------------------- all rules

def _edge(src: str, dst: str, edge_type: str, rule: str, evidence: str, confidence: float, reference: str) -> dict:
    return {"src": src, "dst": dst, "reference": reference, "edge_type": edge_type, "kind": "implicit",
            "rule": rule, "evidence": evidence, "confidence": round(confidence, 4),
            # the target is named by its file, not reached through a written path
            "resolution": "bare_name", "candidates": [dst]}


def implicit_edges(files: list[dict], numbered_series: bool = False) -> list[dict]:
    """Every implicit edge of one workspace, sorted by (src, dst, edge_type). ``numbered_series``: also
    chain files that differ only by a trailing number (off by default, see the module's docstring)."""
    rows = sorted(files, key=lambda r: r["path"])
    edges = version_chains([r["path"] for r in rows], numbered_series) + derived_edges(rows) + same_entity_edges(rows)
    return sorted(edges, key=lambda e: (e["src"], e["dst"], e["edge_type"]))
