"""Explicit dependencies between a workspace's files: extract the references a file writes, resolve
them against the workspace, and measure extraction against a planted truth.

- :func:`extract_references` (one file, its bytes and scanned type) -> references
  ``{reference, edge_type, rule, evidence, confidence}`` from the extractor of its type
  (``extract_code``, ``extract_markup``, ``extract_office``). A file that does not parse as its type
  raises :class:`~benchwright.workspace_bench.extract_common.Unparsable` (a ``RecordError``): it gives
  no edges and the reason is recorded; an Office file that is a zip bomb raises ``ZipBomb`` (also a
  ``RecordError``), before anything is decompressed.
- :class:`WorkspaceIndex` (built once per workspace from its paths, and optionally their sha256) and
  :func:`resolve` (one file's references -> edge rows of the ``edges`` config, without ``edge_id``
  and ``workspace``, which the pipeline adds; ``edge_type``, ``kind`` and ``resolution`` are names).

Resolution: a reference is tried relative to the referring file's folder (a leading '/' means the
workspace root), then by its bare file name anywhere in the workspace (the candidate sharing the longest trailing path with the reference wins; then one in the
referring file's folder). Task data folders store ``data/<16 hex>_<name>``: both steps match a
stored file by its name without the prefix, keyed by full path (the prefix is not unique). A picture
or object embedded in a document also matches the workspace file with the same bytes.
A Python absolute import is looked up as Python finds it, under the referring file's import roots
(:meth:`WorkspaceIndex.import_roots`: a script's own folder, the folder above a module's top-level
package, the workspace's other package roots, the workspace root), never by bare name; a module
of the standard library is a workspace file only inside the workspace's own copy of its package.
``resolution`` is relative / bare_name / ambiguous (several candidates: ``dst`` null, ``candidates``
lists them) / unresolved. URLs (http:, mailto:, ...) and same-document anchors are not workspace
edges and are dropped by the extractors; a reference to the file itself is dropped; a speculative
reference (a string that merely looks like a path) is kept only when it resolves.
"""
from __future__ import annotations

import posixpath
import re
from collections import defaultdict

import fsspec

from benchwright.errors import RecordError
from benchwright.schemas.workspace_bench import EDGE_TYPES, EXPLICIT_EDGE_TYPES, IMPLICIT_EDGE_TYPES
from benchwright.workspace_bench.extract_archive import DEFAULT_LIMITS, Limits, ZipBomb
from benchwright.workspace_bench.extract_code import (css_references, js_references, latex_references,
                                                      notebook_references, python_references, shell_references,
                                                      sql_references)
from benchwright.workspace_bench.extract_common import Unparsable, logical_name
from benchwright.workspace_bench.extract_markup import (data_references, html_references, markdown_references,
                                                        svg_references)
from benchwright.workspace_bench.extract_office import ooxml_references, pdf_references
from benchwright.workspace_bench.extract_text import decode_text
from benchwright.workspace_bench.implicit import implicit_edges
from benchwright.workspace_bench.scan import extension_types, list_workspace, path_extensions, read_entry, scan_file

__all__ = ["extract_references", "describe_file", "WorkspaceIndex", "resolve", "extraction_quality", "describe_workspace",
           "Unparsable", "logical_name", "REFERENCE_TYPES"]

# File names too common to identify a file alone: a bare-name match also needs the parent folder.
# (the names module lookups try: a package's __init__.py, a JS folder's index.js)
_GENERIC_NAMES = frozenset({"__init__.py", "__main__.py", "index.js", "index.ts", "index.tsx", "index.jsx",
                            "index.mjs"})
_RESOLUTION_WEIGHT = {"relative": 1.0, "bare_name": 0.9, "ambiguous": 0.5, "unresolved": 1.0}
_HINT_KEYS = ("variants", "root_variants", "bare", "speculative", "sha256", "module")
_PACKAGE_MARKER = "__init__.py"

_TEXT_EXTRACTORS = {
    "python": lambda text, path, ext: python_references(text, path, ext),
    "ipynb": notebook_references,
    "javascript": lambda text, path, ext: js_references(text, path),
    "shell": shell_references,
    "sql": sql_references,
    "latex": lambda text, path, ext: latex_references(text, path),
    "css": lambda text, path, ext: css_references(text, path),
    "markdown": lambda text, path, ext: markdown_references(text, path),
    "html": lambda text, path, ext: html_references(text, path),
    "svg": lambda text, path, ext: svg_references(text, path),
    **{t: (lambda ft: lambda text, path, ext: data_references(text, path, ft, ext))(t)
       for t in ("json", "jsonl", "yaml", "toml", "csv", "tsv", "ini")},
}
_ALIASES = {"typescript": "javascript", "jsx": "javascript", "tsx": "javascript", "vue": "javascript",
            "scss": "css", "less": "css", "txtascii": "txt"}
_BINARY_EXTRACTORS = {"docx": "ooxml", "pptx": "ooxml", "xlsx": "ooxml", "pdf": "pdf"}
# the scanned types that have an extractor
REFERENCE_TYPES = frozenset(_TEXT_EXTRACTORS) | frozenset(_ALIASES) | frozenset(_BINARY_EXTRACTORS)


def extract_references(path: str, data: bytes, file_type: str, limits: Limits = DEFAULT_LIMITS) -> list[dict]:
    """The explicit references ``path`` writes, by its scanned ``file_type`` (magika's label; an
    extension such as ``py`` is accepted too). A type without an extractor gives none. Raises
    ``Unparsable`` when the file does not parse as its type."""
    kind = _ALIASES.get(file_type, file_type)
    if kind not in _TEXT_EXTRACTORS and kind not in _BINARY_EXTRACTORS:
        kind = _ALIASES.get(extension_types().get(file_type, ""), extension_types().get(file_type, ""))
    extensions = _extensions()
    if kind in _BINARY_EXTRACTORS:
        if _BINARY_EXTRACTORS[kind] == "pdf":
            return pdf_references(data, path)
        try:
            return ooxml_references(data, path, limits, extensions)
        except (Unparsable, ZipBomb):
            raise
        except RecordError as err:  # not a zip, a corrupt member, a DOCTYPE in a part: does not parse
            raise Unparsable(err.locator, f"{file_type} does not parse: {err.reason}") from None
    if kind not in _TEXT_EXTRACTORS:
        return []
    text, encoding = decode_text(data)
    if encoding is None:
        raise Unparsable(path, f"{file_type}: the bytes are not text in any encoding")
    return _TEXT_EXTRACTORS[kind](text, path, extensions)


_EXTENSIONS: frozenset[str] | None = None


def _extensions() -> frozenset[str]:
    global _EXTENSIONS
    if _EXTENSIONS is None:
        _EXTENSIONS = path_extensions()
    return _EXTENSIONS


# --------------------------------------------------------------------------- resolution

class WorkspaceIndex:
    """Every path of one workspace, looked up by exact path, by folder and logical name, by logical name
    anywhere (case-sensitive, then case-insensitive) and by content (sha256), all keyed by full path;
    and its Python packages (folders holding ``__init__.py``). ``name``: the workspace folder's own
    name (a workspace that is itself a package is imported by that name)."""

    def __init__(self, paths, sha256: dict[str, str] | None = None, name: str = ""):
        self.paths = frozenset(paths)
        self.name = name
        in_folder, by_name, by_lower, by_sha, in_named_folder = (defaultdict(list) for _ in range(5))
        for p in sorted(self.paths):
            folder, name = posixpath.split(p)
            logical = logical_name(name)
            in_folder[(folder, logical)].append(p)
            by_name[logical].append(p)
            by_lower[logical.lower()].append(p)
            in_named_folder[(posixpath.basename(folder).lower(), logical.lower())].append(p)
        self.in_named_folder = dict(in_named_folder)
        for p, digest in sorted((sha256 or {}).items()):
            if p in self.paths:
                by_sha[digest].append(p)
        self.in_folder, self.by_name, self.by_lower, self.by_sha = (dict(in_folder), dict(by_name), dict(by_lower),
                                                                   dict(by_sha))
        self.packages = frozenset(folder for folder, logical in self.in_folder if logical == _PACKAGE_MARKER)
        # where top-level packages sit (the folder above a package whose own folder is not one), sorted
        self.package_roots = tuple(sorted({self._above_packages(p) for p in self.packages} - {None}))

    def _above_packages(self, folder: str) -> str | None:
        """The folder above ``folder``'s outermost enclosing package (None: the workspace root is one)."""
        while folder in self.packages:
            if folder == "":
                return None
            folder = posixpath.dirname(folder)
        return folder

    def package_root(self, src: str) -> str | None:
        """The import root of a module in a package: the folder above its top-level package."""
        return self._above_packages(posixpath.dirname(src))

    def top_package(self, src: str) -> str | None:
        """The name of the top-level package ``src`` is a module of (None: a script, in no package)."""
        folder, top = posixpath.dirname(src), None
        while folder in self.packages:
            top = folder
            if folder == "":
                break
            folder = posixpath.dirname(folder)
        if top is None:
            return None
        return posixpath.basename(top) if top else (self.name or None)

    def import_roots(self, src: str) -> list[str | None]:
        """Where an absolute import in ``src`` is looked for, in Python's order: a script's (or a
        notebook's) own folder (``sys.path[0]``); for a module inside a package, the folder above its
        top-level package; then the workspace's other package roots and the workspace root. None
        stands for the folder above a workspace that is itself a package (see :meth:`module_file`)."""
        folder = posixpath.dirname(src)
        first = folder if folder not in self.packages or src.endswith(".ipynb") else self.package_root(src)
        return list(dict.fromkeys([first, *self.package_roots, ""]))

    def module_file(self, root: str | None, spelling: str) -> list[str]:
        """The files of module path ``spelling`` (``a/b.py``, ``a/b/__init__.py``) under an import root."""
        if root is None:  # above the workspace: only the workspace's own package is there
            prefix = f"{self.name}/"
            return self.at(spelling[len(prefix):]) if self.name and spelling.startswith(prefix) else []
        return self.at(posixpath.normpath(posixpath.join(root, spelling)))

    def at(self, path: str) -> list[str]:
        """The file at ``path``, or the stored files of that name in that folder."""
        if path in self.paths:
            return [path]
        return self.in_folder.get(posixpath.split(path), [])

    def named(self, name: str, folder_name: str | None = None) -> list[str]:
        """Files of that name anywhere (or only in folders called ``folder_name``)."""
        logical = logical_name(name)
        if folder_name is not None:
            return self.in_named_folder.get((folder_name.lower(), logical.lower()), [])
        return self.by_name.get(logical) or self.by_lower.get(logical.lower(), [])

    def with_sha256(self, digest: str | None) -> list[str]:
        return self.by_sha.get(digest, []) if digest else []


def _inside(base: str, spelling: str) -> str | None:
    if re.match(r"^[A-Za-z]:/", spelling):
        return None  # a Windows absolute path: only its name can be looked up
    joined = posixpath.normpath(spelling.lstrip("/") if spelling.startswith("/") else posixpath.join(base, spelling))
    return None if joined == ".." or joined.startswith("../") or joined == "." else joined


def _trailing_match(candidate: str, spelling: str) -> int:
    a, b = candidate.split("/"), [p for p in spelling.split("/") if p not in ("", ".")]
    a[-1], b[-1] = logical_name(a[-1]).lower(), logical_name(b[-1]).lower()
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n].lower() == b[-1 - n].lower():
        n += 1
    return n


def _lookup(r: dict, src: str, index: WorkspaceIndex) -> tuple[str, list[str], str]:
    """(resolution, candidates, how) for one reference."""
    if r.get("module") in ("absolute", "stdlib"):
        return _module_lookup(r, src, index)
    folder = posixpath.dirname(src)
    variants = r.get("variants")
    variants = [r["reference"]] if variants is None else variants
    root_variants = r.get("root_variants") or []
    for base, spellings in ((folder, variants), ("", root_variants)):
        for spelling in spellings:
            target = _inside(base, spelling)
            if target == src:
                return "self", [src], "path"
            hits = index.at(target) if target else []
            if hits == [src]:  # a stored file naming itself by its logical name
                return "self", [src], "path"
            hits = [h for h in hits if h != src]
            if hits:
                return ("relative" if len(hits) == 1 else "ambiguous"), hits, "path"
    digest = r.get("sha256")
    if r.get("bare", True):
        for spelling in dict.fromkeys(variants + root_variants):
            parts = [p for p in spelling.rstrip("/").split("/") if p not in ("", ".", "..")]
            if not parts:
                continue
            name = parts[-1]
            if logical_name(name).lower() in _GENERIC_NAMES:
                # a package's __init__.py is known by its folder: look in folders of that name only
                if len(parts) < 2:
                    continue
                candidates = index.named(name, folder_name=parts[-2])
            else:
                candidates = index.named(name)
            candidates = [c for c in candidates if c != src]
            if not candidates:
                continue
            scores = {c: _trailing_match(c, spelling) for c in candidates}
            best = max(scores.values())
            candidates = [c for c in candidates if scores[c] == best]
            if len(candidates) > 1:
                candidates = [c for c in candidates if posixpath.dirname(c) == folder] or candidates
            if len(candidates) > 1 and digest:
                candidates = [c for c in candidates if c in index.with_sha256(digest)] or candidates
            return ("bare_name" if len(candidates) == 1 else "ambiguous"), candidates, "name"
    same_bytes = [c for c in index.with_sha256(digest) if c != src]
    if same_bytes:
        if len(same_bytes) > 1:
            same_bytes = [c for c in same_bytes if posixpath.dirname(c) == folder] or same_bytes
        return ("bare_name" if len(same_bytes) == 1 else "ambiguous"), same_bytes, "sha256"
    return "unresolved", [], ""


def _module_lookup(r: dict, src: str, index: WorkspaceIndex) -> tuple[str, list[str], str]:
    """An absolute Python import: the first import root that holds the module (Python's sys.path order).
    A standard-library module only inside the workspace's own package of that name."""
    roots = index.import_roots(src)
    if r["module"] == "stdlib":
        top = r["reference"].split(".")[0]
        roots = [index.package_root(src)] if index.top_package(src) == top else []
    for root in roots:
        for spelling in r["variants"]:
            hits = index.module_file(root, spelling)
            if hits == [src]:  # a module importing itself (``from rich.box import ...`` in rich/box.py)
                return "self", [src], "path"
            hits = [h for h in hits if h != src]
            if hits:
                return ("relative" if len(hits) == 1 else "ambiguous"), hits, "path"
    return "unresolved", [], ""


def resolve(refs: list[dict], src: str, index: WorkspaceIndex) -> list[dict]:
    """One file's references -> its explicit edge rows (in the references' order, duplicates and
    references to itself dropped, speculative references kept only when they resolve)."""
    edges, seen = [], set()
    for r in refs:
        resolution, candidates, how = _lookup(r, src, index)
        if resolution == "self" or (resolution == "unresolved" and r.get("speculative")):
            continue
        dst = candidates[0] if resolution in ("relative", "bare_name") else None
        key = (r["reference"], r["edge_type"], r["evidence"], dst)
        if key in seen:
            continue
        seen.add(key)
        edges.append({
            "src": src, "dst": dst, "reference": r["reference"], "edge_type": r["edge_type"], "kind": "explicit",
            "rule": r["rule"] + ("+sha256" if how == "sha256" else ""), "evidence": r["evidence"],
            "confidence": round(r["confidence"] * _RESOLUTION_WEIGHT[resolution], 4),
            "resolution": resolution, "candidates": sorted(candidates),
        })
    return edges


# --------------------------------------------------------------------------- quality

def _name(value, names) -> str:
    return names[value] if isinstance(value, int) else value


def _scores(predicted: set, truth: set) -> dict:
    tp = len(predicted & truth)
    return {"precision": tp / len(predicted) if predicted else (1.0 if not truth else 0.0),
            "recall": tp / len(truth) if truth else (1.0 if not predicted else 0.0),
            "true_positives": tp, "predicted": len(predicted), "truth": len(truth)}


def extraction_quality(edges: list[dict], truth: list[dict], file_types: dict[tuple[str, str], str] | None = None,
                       examples: int = 10) -> dict:
    """Precision and recall of resolved edges against planted truth rows ``{workspace, src, dst,
    edge_type, kind, file_type}``: explicit edges matched on (workspace, src, dst, edge_type), overall,
    per edge type and per file type of the referring file (the truth's, else ``file_types``, else the
    extension); implicit edges reported separately, matched on the unordered pair and type. Sets, so
    the result does not depend on the order of either list; a few misses and false positives are
    listed (sorted) to read."""
    types = dict(file_types or {})
    for t in truth:
        types.setdefault((t.get("workspace", ""), t["src"]), t.get("file_type") or "")

    def kind_of(e) -> str:
        if e.get("kind") is not None:
            return _name(e["kind"], ("explicit", "implicit"))
        return "implicit" if _name(e["edge_type"], EDGE_TYPES) in IMPLICIT_EDGE_TYPES else "explicit"

    def keyed(rows, kind):
        out = set()
        for e in rows:
            if e.get("dst") is None or kind_of(e) != kind:
                continue
            edge_type = _name(e["edge_type"], EDGE_TYPES)
            if kind == "explicit":
                out.add((e.get("workspace", ""), e["src"], e["dst"], edge_type))
            else:
                a, b = sorted((e["src"], e["dst"]))
                out.add((e.get("workspace", ""), a, b, edge_type))
        return out

    def breakdown(pred, true, field):
        groups = sorted({field(k) for k in pred | true})
        return {g: _scores({k for k in pred if field(k) == g}, {k for k in true if field(k) == g}) for g in groups}

    def file_type(key) -> str:
        return types.get((key[0], key[1])) or posixpath.splitext(key[1])[1][1:].lower()

    def by_rule(kind) -> dict:
        """Per extractor or implicit rule: how many of its resolved edges the truth holds (the truth
        names no rule, so only precision is defined per rule)."""
        true = keyed(truth, kind)
        rules: dict[str, set] = defaultdict(set)
        for e in edges:
            if e.get("dst") is not None and kind_of(e) == kind:
                rules[e.get("rule") or ""] |= keyed([e], kind)
        return {rule: {"precision": len(keys & true) / len(keys), "predicted": len(keys),
                       "true_positives": len(keys & true)} for rule, keys in sorted(rules.items())}

    pred_x, true_x = keyed(edges, "explicit"), keyed(truth, "explicit")
    pred_i, true_i = keyed(edges, "implicit"), keyed(truth, "implicit")
    report = {
        "explicit": {**_scores(pred_x, true_x),
                     "by_edge_type": breakdown(pred_x, true_x, lambda k: k[3]),
                     "by_file_type": breakdown(pred_x, true_x, file_type),
                     "by_rule": by_rule("explicit"),
                     "missed": sorted(true_x - pred_x)[:examples],
                     "false_positives": sorted(pred_x - true_x)[:examples]},
        "implicit": {**_scores(pred_i, true_i), "by_edge_type": breakdown(pred_i, true_i, lambda k: k[3]),
                     "by_rule": by_rule("implicit")},
    }
    for k in EXPLICIT_EDGE_TYPES:
        report["explicit"]["by_edge_type"].setdefault(k, _scores(set(), set()))
    return report


# --------------------------------------------------------------------------- one workspace, in order

def describe_file(entry: dict, limits: Limits = DEFAULT_LIMITS) -> tuple[dict, list[dict], str | None]:
    """One listed file (a ``list_workspace`` entry) read once: its scanned row, the references written
    in it, and why they are lost when it does not parse as its type (the file itself is kept: None when
    it parses). Raises ``RecordError`` naming the path when the file cannot be read or scanned. The
    pipeline and :func:`describe_workspace` both describe a file with it."""
    data = read_entry(entry, limits)
    row = scan_file(data, entry["path"], limits)
    try:
        return row, extract_references(entry["path"], data, row["file_type"], limits), None
    except Unparsable as err:
        return row, [], err.reason


def describe_workspace(url: str, limits: Limits = DEFAULT_LIMITS, exclude=()) -> dict:
    """Every step for one workspace in one process: list, read, scan, extract, resolve, infer. The
    pipeline runs the same functions file by file; this is for tests, benchmarks and small sources.
    ``exclude``: workspace paths left out (a task folder's ``metadata.json`` is its record, not one of
    its files). Returns ``{files, edges, problems}``: scanned rows, explicit then implicit edges, and
    ``{path, reason}`` for every file the listing refused, the scan refused or that did not parse."""
    entries, problems = list_workspace(url, limits)
    entries = [e for e in entries if e["path"] not in set(exclude)]
    files, references = [], {}
    for entry in entries:
        try:
            row, refs, unparsable = describe_file(entry, limits)
        except RecordError as err:
            problems.append({"path": entry["path"], "reason": err.reason})
            continue
        if unparsable is not None:
            problems.append({"path": entry["path"], "reason": unparsable})
        files.append(row)
        references[row["path"]] = refs
    index = WorkspaceIndex([r["path"] for r in files], {r["path"]: r["sha256"] for r in files},
                           posixpath.basename(fsspec.core.url_to_fs(url)[1].rstrip("/")))
    edges = [e for row in files for e in resolve(references[row["path"]], row["path"], index)]
    return {"files": files, "edges": edges + implicit_edges(files),
            "problems": sorted(problems, key=lambda p: p["path"])}
