"""Unit catalogue: loader, expansion and validator.

The catalogue is declarative data shipped with the package (``catalogue/*.yaml``):

* ``properties.yaml``   the property registry behind the generic ``set_property`` operation,
* ``basedocs.yaml``     base documents and their anchor roles,
* ``instructions.yaml`` instruction phrasings shared by generic units,
* ``units/*.yaml``      planned editing units, one file per subsystem,
* ``compositions.yaml`` composition templates (ordered units + binding rules).

A unit names its Word command (COM-style), subsystem, COM object, properties, OOXML locus,
precondition (recipe for the input document), target (a role resolved to a stable anchor),
operation and typed parameters (with units), instruction templates, reference procedure, oracle
spec (target keys, allowed side effects, tolerance) and whether the edited property survives a
LibreOffice round trip.  Units that use the generic mechanism give only ``property:`` and the
value; the loader fills the rest from the registry, so the expanded unit is always complete.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from benchwright import strict_yaml
from benchwright.memo import Memo
from benchwright.errors import BuildError

CATALOGUE_DIR = Path(__file__).with_name("catalogue")

SUBSYSTEMS = (
    "character_formatting", "paragraph_formatting", "styles", "lists_numbering", "tables", "sections_page_setup",
    "headers_footers", "fields", "footnotes_endnotes", "comments", "tracked_changes", "hyperlinks_bookmarks",
    "images_shapes", "document_properties", "tables_of_contents",
)
PARAM_TYPES = {"bool", "length", "size", "enum", "color", "string", "int", "percent", "style", "list", "cells",
               "emu", "raw"}
REQUIRED_UNIT_FIELDS = ("id", "subsystem", "command", "com_object", "properties", "ooxml", "operation", "target",
                        "params", "precondition", "instructions", "reference", "oracle", "libreoffice_survives")


@dataclass
class Catalogue:
    properties: dict
    units: dict[str, dict]
    templates: dict[str, dict]
    instructions: dict
    basedocs: dict
    root: Path = field(default=CATALOGUE_DIR)

    @property
    def commands(self) -> set[str]:
        return {u["command"] for u in self.units.values()}

    @property
    def com_objects(self) -> set[str]:
        return {u["com_object"] for u in self.units.values()}

    @property
    def subsystems(self) -> set[str]:
        return {u["subsystem"] for u in self.units.values()}

    def object_property_pairs(self) -> set[str]:
        return {f"{u['com_object']}.{p}" for u in self.units.values() for p in u["properties"]}


def _load_yaml(path: Path):
    try:
        with open(path, encoding="utf-8") as fh:
            return strict_yaml.load(fh)  # no aliases: a YAML alias bomb would expand in copy.deepcopy below
    except UnicodeDecodeError as err:  # the line of the byte, not only its offset
        data = path.read_bytes()
        line = data.count(b"\n", 0, err.start) + 1
        raise BuildError(f"{_rel(path)}:{line}: not UTF-8 (byte 0x{data[err.start]:02x}: {err.reason})") from None
    except ValueError as err:  # an integer past Python's digit limit (YAMLError names the file itself)
        raise BuildError(f"{_rel(path)}: {err}") from None


def _rel(path: Path) -> str:
    """A catalogue file as messages name it: ``units/01_x.yaml``, ``properties.yaml``."""
    return f"units/{path.name}" if path.parent.name == "units" else path.name


def _item(path: Path, key: str, index: int) -> str:
    """``<file>#<key>[<index>] (line <n>)``: an item of the list at ``key`` of a catalogue file, for a message
    naming it (the file is composed again, aliases never expanded; without the line if that fails)."""
    where = f"{_rel(path)}#{key}[{index}]"
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        items = next(v for k, v in node.value if k.value == key).value
        return f"{where} (line {items[index].start_mark.line + 1})"
    except Exception:  # noqa: BLE001 - only the line is missing from the message then
        return where


def shape_problem(err: Exception) -> str:
    """What a KeyError, TypeError or AttributeError from reading an item of the wrong shape means, in words."""
    if isinstance(err, KeyError):
        return f"missing field {err.args[0]!r}" if err.args else "a field is missing"
    return f"a field of the wrong type ({err})"


def _section(base: Path, name: str, key: str):
    doc = _load_yaml(base / name)
    if not isinstance(doc, dict) or not isinstance(doc.get(key), (dict, list)):
        raise BuildError(f"{name}: expected a mapping with a {key!r} section")
    return doc[key]


def _reference_text(spec: dict, prop: str) -> str:
    if spec.get("python_docx"):
        return (f"python-docx: set `{spec['python_docx']}` on the {spec['scope']} proxy of the target "
                f"(OOXML {spec['locus']}), through ops.set_property")
    return f"lxml: write {spec['locus']} below the target {spec['scope']} in schema order, through ops.set_property"


def expand_unit(raw: dict, subsystem: str, properties: dict, families: dict) -> dict:
    """Fill a unit from the property registry (generic units) and defaults."""
    u = copy.deepcopy(raw)
    u["subsystem"] = subsystem
    prop = u.get("property")
    if prop:
        if prop not in properties:
            raise BuildError(f"unit {u.get('id')}: unknown property {prop!r}")
        spec = properties[prop]
        u.setdefault("command", prop)
        u.setdefault("com_object", spec["object"])
        u.setdefault("properties", [prop.split(".", 1)[1] if "." in prop else prop])
        u.setdefault("ooxml", spec["locus"])
        u.setdefault("operation", "set_property")
        param = dict(spec.get("param", {}))
        value = u.pop("value", None)
        if isinstance(value, dict):
            param.update(value)
        elif value is not None:
            param["value"] = value
        param["to"] = spec["kind"]
        if spec.get("values") and "label_map" not in param:
            param["labels"] = spec["values"]
        params = u.setdefault("params", {})
        params.setdefault("value", param)
        params["spec"] = {"type": "raw", "value": {**spec, "com": prop}}
        if "instructions" not in u:
            fam = u.pop("family", None) or _family(spec, param)
            u["instructions"] = list(families[fam])
        u.setdefault("reference", _reference_text(spec, prop))
        oracle = u.setdefault("oracle", {})
        oracle.setdefault("targets", [{"at": "target", "keys": [spec["snapshot"]]}])
        u.setdefault("label", spec.get("label", prop))
    u.setdefault("params", {})
    u.setdefault("precondition", [])
    u.setdefault("libreoffice_survives", True)
    oracle = u.setdefault("oracle", {})
    oracle.setdefault("allowed_side_effects", [])
    oracle.setdefault("tolerance", {})
    oracle.setdefault("mode", "effective")
    u.setdefault("alternatives", [])
    if "char_style" in u["alternatives"] and "{target}/chars.style" not in oracle["allowed_side_effects"]:
        # the effective value is what counts: reaching it through a character style is equivalent
        oracle["allowed_side_effects"].append("{target}/chars.style")
    return u


def _family(spec: dict, param: dict) -> str:
    scope = spec["scope"]
    if spec["kind"] in ("onoff", "onoff_inverse"):
        on = param.get("value", True)
        if isinstance(on, dict):
            on = True
        return f"{'run' if scope == 'run' else 'object'}_{'on' if on else 'off'}"
    if spec["kind"] in ("string", "style_ref"):
        return "set_string"
    return "set_value"


CATALOGUE_FILES = ("properties.yaml", "instructions.yaml", "basedocs.yaml", "compositions.yaml")
_PARSED: "Memo[Catalogue]" = Memo(8)  # content key -> the catalogue parsed from it


def content_key(base: Path) -> tuple:
    """What a catalogue folder holds: (file, sha256) of every file the loader reads. Parsing the shipped one
    costs 0.14 CPU-s, hashing it 1 ms: a build's copy under ``_build/catalogue`` (the card's replay agents read it)
    and the source it was copied from, or the same source written in two folders, parse once per process; an
    edited file is parsed again."""
    # every path the parse would read, read here first: one it cannot read (a folder named like a unit file)
    # raises the same OSError, never a key that matches the folder without it
    paths = [base / name for name in CATALOGUE_FILES if os.path.lexists(base / name)]
    paths += sorted((base / "units").glob("*.yaml"))
    return tuple((_rel(p), hashlib.sha256(p.read_bytes()).digest()) for p in paths)


def load_catalogue(root: str | None = None) -> Catalogue:
    """Load and expand the catalogue (pass a directory to load another copy), memoised by what its files hold
    (``content_key``): the same content in another folder is that catalogue with its ``root``."""
    base = Path(root) if root else CATALOGUE_DIR
    cat = _PARSED.get(content_key(base), lambda: _parse_catalogue(base))
    return cat if cat.root == base else dataclasses.replace(cat, root=base)


def _parse_catalogue(base: Path) -> Catalogue:
    properties = _section(base, "properties.yaml", "properties")
    families = _section(base, "instructions.yaml", "families")
    basedocs = _section(base, "basedocs.yaml", "basedocs")
    units: dict[str, dict] = {}
    for path in sorted((base / "units").glob("*.yaml")):
        doc = _load_yaml(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("units"), list) or "subsystem" not in doc:
            raise BuildError(f"{_rel(path)}: expected a mapping with 'subsystem' and a 'units' list")
        for i, raw in enumerate(doc["units"]):
            if not isinstance(raw, dict):
                raise BuildError(f"{_item(path, 'units', i)}: a unit is a mapping of its fields, got "
                                 f"{type(raw).__name__}")
            try:
                u = expand_unit(raw, doc["subsystem"], properties, families)
                uid = u["id"]
            except (KeyError, TypeError, AttributeError) as err:  # a unit of the wrong shape, named
                raise BuildError(f"{_item(path, 'units', i)}: unit {str(raw.get('id'))[:80]!r}: "
                                 f"{shape_problem(err)}") from None
            if not isinstance(uid, str):  # it names cases, their folders and files
                raise BuildError(f"{_item(path, 'units', i)}: unit id {str(uid)[:80]!r} is not text")
            if uid in units:
                raise BuildError(f"{_item(path, 'units', i)}: duplicate unit id {str(uid)[:80]!r} (first in "
                                 f"{units[uid]['source']})")
            u["source"] = f"units/{path.name}"
            units[uid] = u
    templates = {}
    comp = base / "compositions.yaml"
    if comp.exists():
        for i, t in enumerate(_section(base, "compositions.yaml", "templates")):
            if not isinstance(t, dict) or "id" not in t:
                raise BuildError(f"{_item(comp, 'templates', i)}: a template is a mapping with an 'id', got "
                                 f"{str(t)[:80]!r}")
            if t["id"] in templates:
                raise BuildError(f"{_item(comp, 'templates', i)}: duplicate template id {str(t['id'])[:80]!r}")
            templates[t["id"]] = t
    return Catalogue(properties, units, templates, families, basedocs, base)


def validate_catalogue(cat: Catalogue) -> list[str]:
    """Problems in the catalogue ([] = valid)."""
    from benchwright.wordeval.ops import OPERATIONS

    problems: list[str] = []
    for uid, u in cat.units.items():
        for f in REQUIRED_UNIT_FIELDS:
            if f not in u or u[f] in (None, ""):
                problems.append(f"{uid}: missing {f}")
        if u.get("subsystem") not in SUBSYSTEMS:
            problems.append(f"{uid}: unknown subsystem {u.get('subsystem')!r}")
        if u.get("operation") not in OPERATIONS:
            problems.append(f"{uid}: unknown operation {u.get('operation')!r}")
        if not isinstance(u.get("properties"), list) or not u.get("properties"):
            problems.append(f"{uid}: properties must be a non-empty list")
        instr = u.get("instructions") or []
        if len(instr) < 2:
            problems.append(f"{uid}: needs at least two instruction phrasings")
        tgt = u.get("target")
        if not isinstance(tgt, dict) or not tgt:
            problems.append(f"{uid}: target must be an anchor spec (role or literal anchor)")
        else:
            for bad in ("index", "xpath", "element_index"):
                if bad in tgt:
                    problems.append(f"{uid}: target uses an XML index ({bad})")
        for name, p in (u.get("params") or {}).items():
            if not isinstance(p, dict) or "type" not in p:
                problems.append(f"{uid}: parameter {name} is not typed")
                continue
            if p["type"] not in PARAM_TYPES:
                problems.append(f"{uid}: parameter {name} has unknown type {p['type']}")
            if p["type"] in ("length", "size") and "unit" not in p:
                problems.append(f"{uid}: parameter {name} ({p['type']}) has no unit")
            if p["type"] != "raw" and "value" not in p and "choices" not in p:
                problems.append(f"{uid}: parameter {name} has neither value nor choices")
        oracle = u.get("oracle") or {}
        if not oracle.get("targets"):
            problems.append(f"{uid}: oracle has no targets")
        for step in u.get("precondition") or []:
            op = step.get("operation") or ("set_property" if step.get("property") else None)
            if op not in OPERATIONS:
                problems.append(f"{uid}: precondition uses unknown operation {op!r}")
            if step.get("property") and step["property"] not in cat.properties:
                problems.append(f"{uid}: precondition uses unknown property {step['property']!r}")
        if not isinstance(u.get("libreoffice_survives"), bool):
            problems.append(f"{uid}: libreoffice_survives must be true/false")
        for b in u.get("bases", []) or []:
            if b not in cat.basedocs:
                problems.append(f"{uid}: unknown base document {b!r}")
    for tid, t in cat.templates.items():
        steps = t.get("steps") or []
        if len(steps) < 2:
            problems.append(f"template {tid}: needs at least two steps")
        for s in steps:
            if s.get("unit") not in cat.units:
                problems.append(f"template {tid}: unknown unit {s.get('unit')!r}")
        for rule in t.get("bind") or []:
            if not isinstance(rule, dict) or "from" not in rule or "to" not in rule or "what" not in rule:
                problems.append(f"template {tid}: bad binding rule {rule!r}")
            elif max(rule["from"], rule["to"]) >= len(steps):
                problems.append(f"template {tid}: binding refers to a missing step")
            elif rule["what"] not in ("target", "paragraph", "apart") and not str(rule["what"]).startswith("param:"):
                problems.append(f"template {tid}: unknown binding {rule['what']!r}")
    return problems


__all__ = ["Catalogue", "load_catalogue", "validate_catalogue", "expand_unit", "SUBSYSTEMS", "CATALOGUE_DIR"]
