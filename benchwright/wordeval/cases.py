"""Case building: ``build_case(unit, seed, base_doc) -> dict`` and friends.

A case = input .docx (base document + the unit's precondition recipe) + instruction + reference
.docx (the unit's operation applied to the input through the same code path) + oracle spec.
Everything is a deterministic function of (unit, seed, base document): choices use a stable
hash of those three, dates and ids are fixed, zip members are written in a fixed order.

Case dict columns (downstream tools rely on these names): ``case_id``, ``instruction``,
``input_docx`` (bytes), ``reference_docx`` (bytes), ``oracle`` (JSON string), ``command``,
``subsystem``, ``com_object``, ``properties`` (list of "Object.Property"), ``unit_id``, ``seed``,
``base_document``; compositional cases add ``template`` and ``atomic_case_ids``.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import string
from pathlib import Path
from typing import Iterable, Iterator

from benchwright import fields, strict_json
from benchwright.errors import RecordError, SourceError
from benchwright.files import Root
from benchwright.hashing import stable_hash64
from benchwright.wordeval import ops
from benchwright.wordeval.basedocs import base_document
from benchwright.wordeval.catalogue import Catalogue, load_catalogue
from benchwright.wordeval.docmodel import AnchorError, PreconditionError, WordDoc
from benchwright.wordeval.oracle import compare, reference_snapshot

ORACLE_VERSION = 1
_UNIT_NAMES = {"in": "in", "cm": "cm", "mm": "mm", "pt": "pt"}
_TO_TWIPS = {"in": 1440.0, "cm": 1440 / 2.54, "mm": 144 / 2.54, "pt": 20.0, "twips": 1.0}
_TO_EMU = {"in": 914400.0, "cm": 360000.0, "mm": 36000.0, "pt": 12700.0, "emu": 1.0}
PARAGRAPH_ROLES_AS = {"section": "section", "section_2": "section", "list_items": "paragraphs",
                      "table": "table", "uncaptioned_table": "table"}


class NotApplicable(RecordError):
    """The unit cannot be instantiated on this base document: a role or anchor is missing, or an
    operation's declared precondition does not hold (:class:`PreconditionError`)."""


class CaseBuildError(RecordError):
    """An operation failed for any other reason: a bug, reported (quarantined), never skipped."""


# A case id names the case's folder (``exports/cases/<case_id>``) and files tools make after it: the harness's
# ``<case_id>.json`` and ``<case_id>.docx`` and their temporary names (``.<case_id>.json.XXXXXXXX.tmp``).
CASE_FOLDERS = Root("exports/cases", "exports/cases")
CASE_FILE_ROOM = len("..json.XXXXXXXX.tmp")


def make_case_id(name: str, base_doc: str, seed: int, locator: str, source: str) -> str:
    """``<unit or template id>--<base document>--s<seed>``, checked before anything is built: an id that
    cannot name its folder (a ``../`` from the catalogue, a 300-character unit id) is a ``CaseBuildError``
    naming the catalogue file it comes from (``source``)."""
    case_id = f"{name}--{base_doc}--s{seed}"
    problem = CASE_FOLDERS.lexical_problem(case_id, single=True, room=CASE_FILE_ROOM)
    if problem:
        raise CaseBuildError(locator, f"case id {fields.clip(case_id)} {problem}: it names the case's folder under "
                                      f"exports/cases/ (the id {fields.clip(name)} comes from {source}, the base document "
                                      "from basedocs.yaml)")
    return case_id


def _run_operations(fn, locator: str, what: str):
    """Run ``fn()``; a declared precondition that does not hold makes the unit not applicable,
    anything else is a :class:`CaseBuildError` naming the unit and the base document."""
    try:
        return fn()
    except PreconditionError as exc:
        raise NotApplicable(locator, f"{type(exc).__name__}: {exc.reason}") from None
    except RecordError:
        raise
    except Exception as exc:  # noqa: BLE001 - every other failure is reported with its cause
        raise CaseBuildError(locator, f"build error in {what}: {type(exc).__name__}: {exc}") from exc


def _rng(*parts) -> random.Random:
    return random.Random(stable_hash64("|".join(str(p) for p in parts)))


# --------------------------------------------------------------------------- targets


def resolve_target(spec: dict, roles: dict, rng: random.Random, locator: str = "<unit>") -> dict:
    """Role spec -> concrete anchor dict; literal anchors pass through."""
    spec = dict(spec or {})
    role = spec.pop("role", None)
    if role is None:
        return spec
    if role not in roles:
        raise NotApplicable(locator, f"base document has no role {role!r}")
    alt = rng.choice(roles[role])
    kind = PARAGRAPH_ROLES_AS.get(role, "paragraph")
    pick = spec.pop("pick", None)
    if pick is not None:
        if not isinstance(alt, list) or pick >= len(alt):
            raise NotApplicable(locator, f"role {role!r} has no item {pick}")
        alt, kind = alt[pick], "paragraph"
    if isinstance(alt, dict):
        anchor = dict(alt) if kind != "table" else {"table": dict(alt)}
    elif kind == "paragraphs" or isinstance(alt, list):
        anchor = {"paragraphs": list(alt)}
    elif kind == "section":
        anchor = {"section": alt}
    else:
        anchor = {"paragraph": alt}
    anchor.update(spec)
    return anchor


def describe_target(t: dict) -> str:
    def tbl(spec):
        if "caption" in spec:
            return f'the table captioned "{spec["caption"]}"'
        return f'the table whose first cell reads "{spec["first_cell"]}"'

    if "table" in t:
        base = tbl(t["table"])
        if "cell" in t:
            return f"the cell in row {t['cell'][0]}, column {t['cell'][1]} of {base}"
        if "row" in t:
            return f"row {t['row']} of {base}"
        if "rows" in t:
            return f"rows {', '.join(map(str, t['rows']))} of {base}"
        if "column" in t:
            return f"column {t['column']} of {base}"
        return base
    if t.get("story") in ("header", "footer"):
        where = f'the {t.get("hf_type", "primary")} {t["story"]} of the section containing "{t.get("section")}"'
        if "phrase" in t:
            return f'the text "{t["phrase"]}" in {where}'
        return where
    if "phrase" in t:
        return f'the text "{t["phrase"]}" in the paragraph that begins "{t["paragraph"]}"'
    if "paragraphs" in t:
        ps = [f'"{p}"' for p in t["paragraphs"]]
        return "the paragraphs that begin " + ", ".join(ps[:-1]) + " and " + ps[-1]
    if "paragraph" in t:
        return f'the paragraph that begins "{t["paragraph"]}"'
    if "section" in t:
        return f'the section that contains the paragraph beginning "{t["section"]}"'
    if "style" in t:
        return f'the "{t["style"]}" style'
    if "bookmark" in t:
        return f'the bookmark "{t["bookmark"]}"'
    if "comment" in t:
        return f'the comment that begins "{t["comment"]}"'
    if "note" in t:
        return f'the {t.get("story", "footnote")} that begins "{t["note"]}"'
    if "hyperlink" in t:
        return f'the hyperlink "{t["hyperlink"]}"'
    if "revision" in t:
        r = t["revision"]
        kind = {"insert": "insertion", "delete": "deletion", "format": "formatting change"}.get(r.get("type"), "change")
        return f'the tracked {kind} of "{r["text"]}"' if r.get("text") else f"the tracked {kind}"
    if "image" in t:
        if "text" in t["image"]:
            return f'the shape that contains the text "{t["image"]["text"]}"'
        return f'the {t["image"].get("kind", "picture")} described as "{t["image"].get("descr")}"'
    if "content_control" in t:
        return f'the content control tagged "{t["content_control"]}"'
    if "property" in t:
        return f'the custom document property "{t["property"]}"'
    if "field" in t:
        return f"the {t['field']} field"
    return "the document"


# --------------------------------------------------------------------------- parameters


def _fmt_num(x: float) -> str:
    return f"{x:g}"


def resolve_param(p: dict, rng: random.Random, wd: WordDoc | None = None):
    """Typed parameter spec -> (OOXML-native value, human-readable wording)."""
    t = p["type"]
    if t == "raw":
        return p.get("value"), ""
    value = p["value"] if "value" in p else rng.choice(p["choices"])
    label = None
    if isinstance(value, dict) and "value" in value:
        label = value.get("label")
        value = value["value"]
    to = p.get("to") or {"length": "twips", "size": "half_points", "emu": "emu"}.get(t, t)
    unit = p.get("unit")
    if t == "length" or (t == "emu" and unit):
        if to == "emu":
            native = int(round(value * _TO_EMU[unit]))
        elif to == "half_points":
            native = int(round(value * _TO_TWIPS[unit] / 10))
        else:
            native = int(round(value * _TO_TWIPS[unit]))
        human = f"{_fmt_num(value)} {_UNIT_NAMES.get(unit, unit)}"
    elif t == "size":
        native = int(round(value * 2)) if to == "half_points" else int(round(value * (20 if to == "twips" else 8)))
        human = f"{_fmt_num(value)} pt"
    elif t == "color":
        native = str(value).upper() if re.fullmatch(r"[0-9A-Fa-f]{6}", str(value)) else str(value)
        human = f"{label} (hex {native})" if label else f"hex {native}"
    elif t == "enum":
        native = str(value)
        labels = p.get("labels") or {}
        human = label or labels.get(native, native)
    elif t == "bool":
        native = bool(value)
        human = "on" if native else "off"
    elif t == "percent":
        native = int(value)
        human = f"{native}%"
    elif t == "int":
        native = int(value)
        human = str(native)
    elif t == "string" or t == "style":
        native = str(value)
        human = native
    else:  # list / cells
        native = value
        human = ", ".join(f'"{v}"' for v in value) if isinstance(value, list) and all(
            isinstance(v, str) for v in value) else str(value)
    if label and t not in ("color", "enum"):
        human = label
    return native, human


def resolve_params(params: dict, rng: random.Random) -> tuple[dict, dict]:
    native, human = {}, {}
    for name, p in (params or {}).items():
        native[name], human[name] = resolve_param(p, rng)
    return native, human


class _SafeDict(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def render_instruction(template: str, target: dict, human: dict, unit: dict) -> str:
    fields = _SafeDict(human)
    fields["target"] = describe_target(target)
    fields["label"] = unit.get("label", "")
    fields.setdefault("value", human.get("value", ""))
    if "table" in target:
        fields["table_desc"] = describe_target({"table": target["table"]})
    for k, v in target.items():
        if isinstance(v, (str, int)):
            fields.setdefault(k, v)
    text = string.Formatter().vformat(template, (), fields)
    return text[0].upper() + text[1:] if text else text


# --------------------------------------------------------------------------- oracle


def _doc_anchor(unit: dict, target: dict) -> dict:
    spec = unit["params"].get("spec", {}).get("value") if unit["operation"] == "set_property" else None
    if spec and spec["scope"] == "settings":
        return {"document": "settings"}
    if spec and spec["scope"] == "core":
        return {"document": "props"}
    return target


def _fill_keys(keys: list[str], target: dict, params: dict) -> list[str]:
    out = []
    subst = {"row": target.get("row"), "column": target.get("column")}
    if "cell" in target:
        subst["cell"] = f"cell{target['cell'][0]}.{target['cell'][1]}"
    for k, v in params.items():
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            subst.setdefault(k, v)
    for k in keys:
        out.append(re.sub(r"\{(\w+)\}", lambda m: str(subst.get(m.group(1), m.group(0))), k))
    return out


def _check_observable(reference: tuple[bytes, dict | None], input_: tuple[bytes, dict | None], oracle: dict,
                      locator: str) -> None:
    """The unedited input must fail the oracle, otherwise the edit is not observable here. ``reference`` and
    ``input_``: a .docx and the members it was just written from (``WordDoc.to_archive``), or None."""
    ref_snap, ref_flat = reference_snapshot(*reference)
    inp_snap, _ = reference_snapshot(*input_)
    if compare(ref_snap, inp_snap, oracle, ref_flat)["passed"]:
        raise NotApplicable(locator, "the edit has no observable effect on this base document")


def make_oracle(unit: dict, target: dict, params: dict, ref_target: dict | None = None) -> dict:
    o = unit["oracle"]
    targets = []
    ref_target = ref_target or target
    for t in o["targets"]:
        keys = _fill_keys(t["keys"], target, params)
        if t.get("at") == "target":
            targets.append({"anchor": _doc_anchor(unit, ref_target), "keys": keys})
        elif "anchor" in t:
            targets.append({"anchor": t["anchor"], "keys": keys})
        else:
            targets.append({"anchor": None, "keys": keys})
    return {
        "version": ORACLE_VERSION,
        "unit_id": unit["id"],
        "mode": o.get("mode", "effective"),
        "target": target,
        "targets": targets,
        "allowed_side_effects": _fill_keys(list(o.get("allowed_side_effects", [])), target, params),
        "tolerance": dict(o.get("tolerance", {})),
        "libreoffice_survives": bool(unit.get("libreoffice_survives", True)),
        "subsystem": unit["subsystem"],
        "command": unit["command"],
        "com_object": unit["com_object"],
        "properties": [f"{unit['com_object']}.{p}" for p in unit["properties"]],
    }


# --------------------------------------------------------------------------- applying units


def _step_params(step: dict, cat: Catalogue, rng: random.Random) -> tuple[str, dict]:
    if step.get("property"):
        spec = cat.properties[step["property"]]
        value_spec = dict(spec.get("param", {}))
        v = step.get("value", True)
        if isinstance(v, dict):
            value_spec.update(v)
        else:
            value_spec["value"] = v
        value_spec["to"] = spec["kind"]
        native, _ = resolve_param(value_spec, rng)
        return "set_property", {"spec": {**spec, "com": step["property"]}, "value": native}
    params = {}
    for name, p in (step.get("params") or {}).items():
        params[name] = resolve_param(p, rng)[0] if isinstance(p, dict) and "type" in p else p
    return step["operation"], params


def apply_step(wd: WordDoc, step: dict, unit_target: dict, roles: dict, cat: Catalogue, rng: random.Random,
               locator: str) -> None:
    tspec = step.get("target", "same")
    if tspec == "same":
        target = unit_target
    elif isinstance(tspec, dict) and "merge" in tspec:
        target = {**unit_target, **tspec["merge"]}
    else:
        target = resolve_target(tspec, roles, rng, locator)
    op, params = _step_params(step, cat, rng)
    ops.apply(wd, op, target, params)


def _apply_unit(wd: WordDoc, unit: dict, target: dict, params: dict) -> dict:
    """Apply the unit's operation; return the target anchor as it reads in the result (a paragraph
    whose text the edit changed is then still found by the evaluator)."""
    from benchwright.wordeval import text as T
    paras = []
    try:
        if "paragraph" in target or "paragraphs" in target:
            paras = ops.paragraphs_for(wd, target)
    except AnchorError:
        paras = []
    ops.apply(wd, unit["operation"], target, params)
    if not paras:
        return target
    new = []
    for p in paras:
        attached = p.getparent() is not None and p.getroottree().getroot() is not None
        new.append(T.paragraph_read_text(p).strip() if attached else None)
    ref_target = dict(target)
    if "paragraph" in target and new[0]:
        ref_target["paragraph"] = new[0]
    if "paragraphs" in target and all(new):
        ref_target["paragraphs"] = new
    return ref_target


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _resolve_unit(unit: dict, seed: int, base_doc: str, cat: Catalogue, *redraw):
    rng = _rng(unit["id"], base_doc, seed, *redraw)
    roles = cat.basedocs[base_doc].get("roles", {})
    locator = f"{unit['id']}@{base_doc}#seed={seed}"
    target = resolve_target(unit["target"], roles, rng, locator)
    native, human = resolve_params(unit["params"], rng)
    template = rng.choice(unit["instructions"])
    return rng, roles, locator, target, native, human, template


def build_case(unit: dict | str, seed: int, base_doc: str, catalogue: Catalogue | None = None) -> dict:
    """Build one atomic case. Raises ``NotApplicable`` when the base document lacks what the
    unit needs (a role, an anchor, an operation's declared precondition) or the edit would not
    be observable, ``CaseBuildError`` (a ``RecordError``) for any other failure to build."""
    cat = catalogue or load_catalogue()
    if isinstance(unit, str):
        unit = cat.units[unit]
    case_id = make_case_id(unit["id"], base_doc, seed, f"{unit['id']}@{base_doc}#seed={seed}",
                           unit.get("source", "the catalogue's units/"))
    rng, roles, locator, target, native, human, template = _resolve_unit(unit, seed, base_doc, cat)

    def run():
        if unit["precondition"]:
            wd = WordDoc(base_document(base_doc), locator)
            for i, step in enumerate(unit["precondition"]):
                apply_step(wd, step, target, roles, cat, _rng(unit["id"], base_doc, seed, "pre", i), locator)
            written_input = wd.to_archive()
        else:
            written_input = (base_document(base_doc), None)   # already written by the same code path
        ref = WordDoc(written_input[0], locator)
        ref_target = _apply_unit(ref, unit, target, native)
        return written_input, ref_target, ref.to_archive()

    written_input, ref_target, written_reference = _run_operations(
        run, locator, f"unit {unit['id']!r} on base document {base_doc!r} (seed {seed})")
    input_docx, reference_docx = written_input[0], written_reference[0]
    if reference_docx == input_docx:
        raise NotApplicable(locator, "the operation did not change the document")
    instruction = render_instruction(template, target, human, unit)
    oracle = make_oracle(unit, target, native, ref_target)
    _check_observable(written_reference, written_input, oracle, locator)
    return {
        "case_id": case_id,
        "instruction": instruction,
        "input_docx": input_docx,
        "reference_docx": reference_docx,
        "oracle": json.dumps(oracle, sort_keys=True, ensure_ascii=False),
        "command": unit["command"],
        "subsystem": unit["subsystem"],
        "com_object": unit["com_object"],
        "properties": [f"{unit['com_object']}.{p}" for p in unit["properties"]],
        "unit_id": unit["id"],
        "seed": int(seed),
        "base_document": base_doc,
    }


def unit_bases(unit: dict, cat: Catalogue, base_docs: Iterable[str] | None = None) -> list[str]:
    """Base documents to try for a unit, in order: the unit's own list, or every base document
    starting at a position derived from the unit id (a stable hash), so that synthetic and real
    documents are spread over the catalogue instead of always trying the same ones first."""
    names = list(base_docs) if base_docs is not None else list(cat.basedocs)
    if unit.get("bases"):
        return [b for b in unit["bases"] if b in names]
    k = stable_hash64(unit["id"]) % len(names) if names else 0
    return names[k:] + names[:k]


def iter_cases(catalogue: Catalogue | None = None, seeds: Iterable[int] = (0, 1),
               base_docs: Iterable[str] | None = None, units: Iterable[str] | None = None,
               errors: list | None = None, not_planned: list | None = None) -> Iterator[dict]:
    """All atomic cases: units x seeds x compatible base documents (at most ``max_bases`` per unit,
    default 2). Identical (input, reference) pairs from different seeds are kept once.
    Build failures other than NotApplicable are appended to ``errors`` (or raised); every
    (unit, base document, seed) tried and not planned is appended to ``not_planned`` with the
    reason (a precondition the base document does not meet, or the same case as another seed)."""
    cat = catalogue or load_catalogue()
    seeds = list(seeds)
    for uid in (units or cat.units):
        unit = cat.units[uid]
        used = 0
        cap = unit.get("max_bases", 2)
        for base in unit_bases(unit, cat, base_docs):
            if used >= cap:
                break
            seen: dict[tuple, int] = {}
            built = False
            for seed in seeds:
                try:
                    case = build_case(unit, seed, base, cat)
                except NotApplicable as exc:
                    if not_planned is not None:
                        not_planned.append({"unit_id": uid, "base_document": base, "seed": seed,
                                            "reason": exc.reason})
                    continue
                except RecordError as exc:
                    if errors is None:
                        raise
                    errors.append({"unit_id": uid, "base_document": base, "seed": seed, "reason": str(exc)})
                    continue
                key = (_sha(case["input_docx"]), _sha(case["reference_docx"]))
                if key in seen:
                    if not_planned is not None:
                        not_planned.append({"unit_id": uid, "base_document": base, "seed": seed,
                                            "reason": f"the same input and reference as seed {seen[key]}"})
                    continue
                seen[key] = seed
                built = True
                yield case
            used += built


# --------------------------------------------------------------------------- compositions


APART_REDRAWS = 16


def _paragraphs_of(target: dict) -> set[str]:
    """The body paragraphs (by their anchor text) a target edits."""
    return ({target["paragraph"]} if "paragraph" in target else set()) | set(target.get("paragraphs") or ())


def build_composite(template: dict | str, seed: int, base_doc: str, catalogue: Catalogue | None = None,
                    atomic_ids: set[str] | None = None) -> dict:
    """Instantiate a composition template: the units' preconditions, then their operations in
    order, with the template's binding rules (shared target / parameters) applied."""
    cat = catalogue or load_catalogue()
    if isinstance(template, str):
        template = cat.templates[template]
    case_id = make_case_id(template["id"], base_doc, seed, f"{template['id']}@{base_doc}#seed={seed}",
                           "compositions.yaml")
    steps = []
    for st in template["steps"]:
        unit = cat.units[st["unit"]]
        rng, roles, locator, target, native, human, tmpl = _resolve_unit(unit, seed, base_doc, cat)
        steps.append({"unit": unit, "target": target, "native": native, "human": human, "template": tmpl,
                      "rng": rng, "roles": roles})
    _bind(template, steps, seed, base_doc, cat)
    locator = f"{template['id']}@{base_doc}#seed={seed}"

    def run():
        wd = WordDoc(base_document(base_doc), locator)
        prepared: set[str] = set()
        for s in steps:
            u = s["unit"]
            for i, step in enumerate(u["precondition"]):
                # units that prepare the same object (the same operation with the same parameters,
                # e.g. the shape "Panel" several shape units edit) share it: prepared once
                key = json.dumps({k: step.get(k) for k in ("operation", "property", "params", "value")},
                                 sort_keys=True, default=str)
                if key in prepared:
                    continue
                prepared.add(key)
                apply_step(wd, step, s["target"], s["roles"], cat, _rng(u["id"], base_doc, seed, "pre", i), locator)
        written_input = wd.to_archive()
        ref = WordDoc(written_input[0], locator)
        for s in steps:
            s["ref_target"] = _apply_unit(ref, s["unit"], s["target"], s["native"])
        return written_input, ref.to_archive()

    written_input, written_reference = _run_operations(
        run, locator, f"template {template['id']!r} on base document {base_doc!r} (seed {seed})")
    input_docx, reference_docx = written_input[0], written_reference[0]
    parts = [render_instruction(s["template"], s["target"], s["human"], s["unit"]) for s in steps]
    instruction = "Make these edits in order: " + " ".join(f"({i + 1}) {p}" for i, p in enumerate(parts))
    oracle = _composite_oracle(template, steps)
    _check_observable(written_reference, written_input, oracle, locator)
    atomic = _atomic_case_ids(steps, base_doc, seed, atomic_ids)
    return {
        "case_id": case_id,
        "instruction": instruction,
        "input_docx": input_docx,
        "reference_docx": reference_docx,
        "oracle": json.dumps(oracle, sort_keys=True, ensure_ascii=False),
        "command": oracle["command"],
        "subsystem": oracle["subsystem"],
        "com_object": oracle["com_object"],
        "properties": oracle["properties"],
        "unit_id": "+".join(s["unit"]["id"] for s in steps),
        "seed": int(seed),
        "base_document": base_doc,
        "template": template["id"],
        "atomic_case_ids": atomic,
    }


def _bind(template: dict, steps: list[dict], seed: int, base_doc: str, cat: Catalogue) -> None:
    """Apply the template's binding rules to its resolved ``steps``: a shared target or paragraph,
    a shared parameter, or two steps kept on different paragraphs (``apart``)."""
    for rule in template.get("bind") or []:
        src, dst = steps[rule["from"]], steps[rule["to"]]
        what = rule["what"]
        if what == "target":
            dst["target"] = dict(src["target"])
        elif what == "paragraph":
            keep = {k: v for k, v in dst["target"].items() if k not in ("paragraph", "phrase", "paragraphs")}
            dst["target"] = {**keep, **{k: v for k, v in src["target"].items()
                                        if k in ("paragraph", "phrase", "paragraphs", "story", "section", "hf_type")}}
        elif what.startswith("param:"):
            name = what.split(":", 1)[1]
            dst["native"][name] = src["native"][name]
            dst["human"][name] = src["human"][name]
        elif what == "apart":
            # step j must edit another paragraph than step i (a tracked deletion inside the
            # paragraph a tracked insertion just changed leaves neither step's text where its
            # oracle looks for it): redraw j's target, seeded, until the paragraphs differ
            attempt = 0
            while _paragraphs_of(dst["target"]) & _paragraphs_of(src["target"]):
                attempt += 1
                if attempt > APART_REDRAWS:
                    raise NotApplicable(f"{template['id']}@{base_doc}#seed={seed}",
                                        f"steps {rule['from']} and {rule['to']} must edit different paragraphs; "
                                        f"{APART_REDRAWS} draws found none")
                rng, roles, _, target, native, human, tmpl = _resolve_unit(
                    dst["unit"], seed, base_doc, cat, "apart", attempt)
                dst.update(target=target, native=native, human=human, template=tmpl, rng=rng, roles=roles)


def _composite_oracle(template: dict, steps: list[dict]) -> dict:
    """The composition's oracle: every step's oracle (its targets located in the reference) merged."""
    oracles = [make_oracle(s["unit"], s["target"], s["native"], s.get("ref_target")) for s in steps]
    oracle = {
        "version": ORACLE_VERSION, "unit_id": None, "template": template["id"], "mode": "effective",
        "target": steps[0]["target"],
        "targets": [t for o in oracles for t in o["targets"]],
        "allowed_side_effects": sorted({a for o in oracles for a in o["allowed_side_effects"]}),
        "tolerance": {k: v for o in oracles for k, v in o["tolerance"].items()},
        "libreoffice_survives": all(o["libreoffice_survives"] for o in oracles),
        "subsystem": "+".join(dict.fromkeys(o["subsystem"] for o in oracles)),
        "command": " ; ".join(o["command"] for o in oracles),
        "com_object": "+".join(dict.fromkeys(o["com_object"] for o in oracles)),
        "properties": list(dict.fromkeys(p for o in oracles for p in o["properties"])),
    }
    return oracle


def _atomic_case_ids(steps: list[dict], base_doc: str, seed: int, atomic_ids: set[str] | None) -> list[str]:
    """The atomic case of each step: ``<unit>--<base>--s<seed>``, or with ``atomic_ids`` the case that
    exists (that one, else the unit's case on this base document, else any case of the unit)."""
    atomic = [f"{s['unit']['id']}--{base_doc}--s{seed}" for s in steps]
    if atomic_ids is not None:
        # the exact (unit, base, seed) case, else the unit's case on this base document (an
        # identical seed variant is kept only once), else any case of the unit
        linked = []
        for s_, exact in zip(steps, atomic):
            uid = s_["unit"]["id"]
            cands = [exact] if exact in atomic_ids else \
                sorted(a for a in atomic_ids if a.startswith(f"{uid}--{base_doc}--")) or \
                sorted(a for a in atomic_ids if a.startswith(f"{uid}--"))
            if cands:
                linked.append(cands[0])
        atomic = linked
    return atomic


def iter_compositions(catalogue: Catalogue | None = None, seeds: Iterable[int] = (0, 1),
                      base_docs: Iterable[str] | None = None, atomic_ids: set[str] | None = None,
                      errors: list | None = None, not_planned: list | None = None) -> Iterator[dict]:
    cat = catalogue or load_catalogue()
    for tid, t in cat.templates.items():
        names = list(base_docs) if base_docs is not None else list(cat.basedocs)
        bases = [b for b in (t.get("bases") or names) if b in names]
        made = 0
        for base in bases:
            if made >= t.get("max_cases", 4):
                break
            for seed in seeds:
                try:
                    yield build_composite(t, seed, base, cat, atomic_ids)
                    made += 1
                except NotApplicable as exc:
                    if not_planned is not None:
                        not_planned.append({"template": tid, "base_document": base, "seed": seed,
                                            "reason": exc.reason})
                    continue
                except RecordError as exc:
                    if errors is None:
                        raise
                    errors.append({"template": tid, "base_document": base, "seed": seed, "reason": str(exc)})


# --------------------------------------------------------------------------- everything


_ALL_CACHE: dict = {}


def build_all(seeds: tuple[int, ...] = (0, 1), base_docs: tuple[str, ...] | None = None) -> dict:
    """All atomic and compositional cases (memoised per process): ``{"atomic": [...],
    "compositional": [...], "errors": [...], "not_planned": [...]}`` (``not_planned``: every
    unit or template tried on a base document and seed and not planned there, with the reason)."""
    key = (tuple(seeds), tuple(base_docs) if base_docs else None)
    if key not in _ALL_CACHE:
        cat = load_catalogue()
        errors: list = []
        not_planned: list = []
        atomic = list(iter_cases(cat, seeds, base_docs, errors=errors, not_planned=not_planned))
        ids = {c["case_id"] for c in atomic}
        comps = list(iter_compositions(cat, seeds, base_docs, atomic_ids=ids, errors=errors, not_planned=not_planned))
        _ALL_CACHE[key] = {"atomic": atomic, "compositional": comps, "errors": errors, "not_planned": not_planned}
    return _ALL_CACHE[key]


# --------------------------------------------------------------------------- case directories

CASE_JSON_FIELDS = ("case_id", "instruction", "command", "subsystem", "com_object", "properties", "unit_id", "seed",
                    "base_document", "template", "atomic_case_ids")


def write_case_dir(case: dict, directory: str | Path) -> Path:
    """Write ``<dir>/{input.docx, reference.docx, case.json}`` (``dir`` is the case's own folder,
    typically ``exports/cases/<case_id>``)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    (d / "input.docx").write_bytes(case["input_docx"])
    (d / "reference.docx").write_bytes(case["reference_docx"])
    meta = {k: case[k] for k in CASE_JSON_FIELDS if k in case}
    meta["oracle"] = json.loads(case["oracle"]) if isinstance(case["oracle"], str) else case["oracle"]
    meta["sha256"] = {"input.docx": _sha(case["input_docx"]), "reference.docx": _sha(case["reference_docx"])}
    (d / "case.json").write_text(json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
    return d


def read_case_dir(directory: str | Path) -> dict:
    """The case a folder written by ``write_case_dir`` holds. ``case.json`` is read strictly
    (``strict_json.read``: UTF-8, a repeated key refused) and must be an object with an ``oracle``
    object; a .docx whose sha256 is not the one ``case.json`` records (the reference of another case,
    or edited) is refused: ``RecordError`` naming the file (``SourceError`` when one cannot be read)."""
    d = Path(directory)
    meta = strict_json.read(d / "case.json")
    if not isinstance(meta, dict) or not isinstance(meta.get("oracle"), dict):
        raise RecordError(str(d / "case.json"), "a case is a JSON object with an 'oracle' object")
    case = dict(meta)
    case["oracle"] = json.dumps(meta["oracle"], sort_keys=True, ensure_ascii=False)
    recorded = meta.get("sha256") if isinstance(meta.get("sha256"), dict) else {}
    for name in ("input.docx", "reference.docx"):
        path = d / name
        if name == "input.docx" and not path.exists():
            case["input_docx"] = None
            continue
        try:
            data = path.read_bytes()
        except OSError as err:
            raise SourceError(f"{path}: cannot read: {err.strerror or err}") from None
        if name in recorded and recorded[name] != _sha(data):
            raise RecordError(str(path), f"sha256 {_sha(data)[:12]}... is not the {fields.clip(str(recorded[name]))} "
                                         "case.json records (another case's file, or edited)")
        case[name.replace(".", "_")] = data
    return case


__all__ = ["build_all", "build_case", "iter_cases", "build_composite", "iter_compositions", "write_case_dir", "read_case_dir",
           "NotApplicable", "CaseBuildError", "resolve_target", "describe_target", "make_oracle"]
