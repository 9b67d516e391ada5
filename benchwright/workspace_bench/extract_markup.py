"""References in markup and data: Markdown (mistune's syntax tree: links, images, reference
definitions, raw HTML), HTML (lxml: ``a href``, ``img src``, ``script src``, ``link href``, ...), SVG
(lxml, hardened: ``image`` / ``use`` / ``a`` hrefs), and string values of JSON, YAML, TOML, CSV / TSV
and INI files that look like paths (speculative: kept when they resolve).
"""
from __future__ import annotations

import configparser
import csv
import io
import json

from lxml import etree

from benchwright.errors import RecordError
from benchwright.formats.ooxml.safety import UnsafeDocxError, parse_xml
from benchwright.workspace_bench.extract_common import Unparsable, line_containing, looks_like_path, ref, web_path

# element -> (attribute, edge type); `link` and `a` depend on the element's own attributes below
_HTML_TARGETS = {
    "a": ("href", "link"), "area": ("href", "link"), "img": ("src", "image"), "script": ("src", "include"),
    "link": ("href", "include"), "iframe": ("src", "include"), "frame": ("src", "include"),
    "embed": ("src", "embedded_object"), "object": ("data", "embedded_object"), "source": ("src", "image"),
    "video": ("src", "link"), "audio": ("src", "link"), "track": ("src", "include"), "input": ("src", "image"),
}
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
MAX_DATA_STRINGS = 100_000   # string values examined per data file


# --------------------------------------------------------------------------- Markdown, HTML

def markdown_references(text: str, path: str) -> list[dict]:
    """Inline and reference-style links and images through mistune's syntax tree, and the tags of raw
    HTML inside the Markdown through lxml."""
    import mistune

    tokens = mistune.create_markdown(renderer=None)(text)
    out = []

    def walk(items):
        for token in items:
            kind = token.get("type")
            if kind in ("link", "image"):
                url = (token.get("attrs") or {}).get("url") or ""
                target = web_path(url)
                if target:
                    out.append(ref(target, "image" if kind == "image" else "link", f"markdown.{kind}",
                                   line_containing(text, url), 1.0))
            elif kind in ("inline_html", "block_html"):
                out.extend(r for r in html_references(token.get("raw") or "", path, quiet=True))
            walk(token.get("children") or ())

    walk(tokens)
    for r in out:
        if r["rule"].startswith("html."):
            r["rule"] = "markdown." + r["rule"]
            r["evidence"] = line_containing(text, r["reference"], r["evidence"])
    return out


def html_references(text: str, path: str, quiet: bool = False) -> list[dict]:
    """``a/area href`` (link), ``img/source/input src`` (image), ``script src`` and ``link href``
    (include; a ``link rel=icon`` is an image), ``iframe/frame/track src`` (include),
    ``embed src`` / ``object data`` (embedded object), ``video/audio src`` (link)."""
    import lxml.html

    if not text.strip():
        return []
    try:
        root = lxml.html.fromstring(text.encode("utf-8"), parser=lxml.html.HTMLParser(
            encoding="utf-8", no_network=True, remove_comments=True, remove_pis=True))
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
        if quiet:
            return []
        raise Unparsable(path, f"html does not parse: {exc}") from None
    lines = text.splitlines()
    out = []
    for el in root.iter(*_HTML_TARGETS):
        attribute, edge_type = _HTML_TARGETS[el.tag]
        value = el.get(attribute)
        if not value:
            continue
        rel = (el.get("rel") or "").lower()
        if el.tag == "link" and "icon" in rel:
            edge_type = "image"
        target = web_path(value)
        if not target:
            continue
        n = el.sourceline or 0
        source_line = lines[n - 1] if 0 < n <= len(lines) and value in lines[n - 1] else line_containing(text, value)
        out.append(ref(target, edge_type, f"html.{el.tag}", source_line.strip(), 1.0))
    return out


def svg_references(text: str, path: str) -> list[dict]:
    """``image``, ``use``, ``a`` and ``feImage`` hrefs (SVG 2 ``href`` or ``xlink:href``) to files; the
    hardened parser refuses DOCTYPEs and entities."""
    try:
        root = parse_xml(text.encode("utf-8"), path)
    except UnsafeDocxError as exc:
        raise Unparsable(path, f"svg does not parse: {exc.reason}") from None
    out = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        local = etree.QName(el).localname
        value = el.get("href") or el.get(_XLINK_HREF)
        if local not in ("image", "use", "a", "feImage") or not value:
            continue
        target = web_path(value)
        if target:
            out.append(ref(target, "link" if local == "a" else "image", f"svg.{local}",
                           line_containing(text, value), 1.0))
    return out


# --------------------------------------------------------------------------- data files

def _strings(value, seen: set[int], out: list[str]) -> None:
    """String values (not keys) of nested data, each container visited once (YAML aliases share
    objects: a billion-laughs document is walked in linear time)."""
    stack = [value]
    while stack and len(out) < MAX_DATA_STRINGS:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, (dict, list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            children = item.values() if isinstance(item, dict) else item
            stack.extend(reversed(list(children)))


def _all_values(pairs: list) -> list:
    """``object_pairs_hook`` keeping every value of an object, a repeated key's too (``json`` keeps the
    last one only: a path given under the first would be lost from the references without a word)."""
    return [value for _, value in pairs]


def _data_refs(values: list[str], text: str, rule: str, extensions) -> list[dict]:
    out = []
    for value in values:
        if looks_like_path(value, extensions):
            target = value.strip()
            out.append(ref(target, "data_reference", rule, line_containing(text, target), 0.7, speculative=True))
    return out


def data_references(text: str, path: str, file_type: str, extensions) -> list[dict]:
    """String values that look like paths in JSON / JSON Lines, YAML (safe loader), TOML (tomllib),
    CSV / TSV (csv) and INI (configparser, no interpolation)."""
    values: list[str] = []
    try:
        if file_type == "json":
            _strings(json.loads(text, object_pairs_hook=_all_values), set(), values)
        elif file_type == "jsonl":
            seen: set[int] = set()
            for line in text.splitlines():
                if line.strip():
                    _strings(json.loads(line, object_pairs_hook=_all_values), seen, values)
        elif file_type == "yaml":
            import yaml

            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            seen = set()
            for document in yaml.load_all(text, Loader=loader):
                _strings(document, seen, values)
        elif file_type == "toml":
            import tomllib

            _strings(tomllib.loads(text), set(), values)
        elif file_type in ("csv", "tsv"):
            reader = csv.reader(io.StringIO(text), delimiter="\t" if file_type == "tsv" else ",")
            for row in reader:
                values.extend(row)
                if len(values) >= MAX_DATA_STRINGS:
                    break
        elif file_type == "ini":
            # .properties and .env files are INI without a section header: read under a default one
            parser = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True)
            try:
                parser.read_string(text)
            except configparser.MissingSectionHeaderError:
                parser = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True,
                                                   default_section="\0")
                parser.read_string("[properties]\n" + text)
            for section in parser.sections():
                values.extend(v for v in parser[section].values() if v)
    except RecordError:
        raise
    except Exception as exc:  # each parser has its own error classes; all mean "does not parse"
        raise Unparsable(path, f"{file_type} does not parse: {type(exc).__name__}: {exc}") from None
    return _data_refs(values[:MAX_DATA_STRINGS], text, f"{file_type}.value", extensions)
