"""Source records and their examples: one shape for every source format (no Beam, no file access).

A source record is one image with its instruction-response pairs; each pair is an *example*. The
parsers here check one record at a time: a problem with the whole record (no id, no image, an
unknown category, no pair at all) raises ``RecordError``; a problem with one pair (no instruction,
an empty response) is returned as a ``PairProblem`` and the record keeps its other pairs.
Locators name the file and the record: ``train.json#id=Ads_306373`` and
``train.json#id=Ads_306373/instr-resp[1]``.
"""
from __future__ import annotations

import dataclasses
import posixpath
import re

from benchwright.errors import RecordError
from benchwright.fields import clip
from benchwright.files import Root
from benchwright.schemas import vlm_unlearning as schema

# VLGuard's pair keys: the instruction key says what the pair is.
UNSAFE_IMAGE_KEY = "instruction"
SAFE_KEY = "safe_instruction"
UNSAFE_KEY = "unsafe_instruction"
INSTRUCTION_KEYS = (UNSAFE_IMAGE_KEY, SAFE_KEY, UNSAFE_KEY)
TEST_STEM = "test"  # the annotation file whose examples form the test split


@dataclasses.dataclass(frozen=True)
class Example:
    example_id: str
    record_id: str
    source_file: str
    pair_index: int
    subset: str
    role: str
    split: str
    image_safe: bool | None
    harmful_category: str | None
    harmful_subcategory: str | None
    instruction: str
    response: str
    description: str
    description_source: str


@dataclasses.dataclass(frozen=True)
class SourceRecord:
    record_key: str
    record_id: str
    source_file: str
    index: int                  # position in its file (duplicates keep the first)
    image_path: str             # relative to the image root
    image_url: str              # where the image is read from
    image_safe: bool | None
    harmful_category: str | None
    harmful_subcategory: str | None
    pairs: int                  # pairs in the source record, good or bad
    examples: tuple[Example, ...]
    split: str                  # the records config's split: train or test

    @property
    def locator(self) -> str:
        return record_locator(self.source_file, self.record_id, self.index)


@dataclasses.dataclass(frozen=True)
class PairProblem:
    locator: str
    reason: str


def record_locator(source_file: str, record_id, index: int) -> str:
    if isinstance(record_id, str) and record_id.strip():
        return f"{source_file}#id={record_id}"
    return f"{source_file}#index={index}"


def pair_locator(source_file: str, record_id: str, pair_index: int) -> str:
    return f"{source_file}#id={record_id}/instr-resp[{pair_index}]"


def file_stem(source_file: str) -> str:
    return posixpath.splitext(posixpath.basename(source_file))[0]


def file_key(source_file: str) -> str:
    """The annotation file's path without its extension: ``train`` for ``train.json``,
    ``forget05/train-00000-of-00001`` for a Hugging Face release's shard (whose file names repeat
    from folder to folder, so the name alone would give two files' records one key)."""
    return posixpath.splitext(source_file)[0]


def record_key(source_file: str, record_id: str) -> str:
    return f"{file_key(source_file)}/{record_id}"


def example_id(source_file: str, record_id: str, pair_index: int) -> str:
    return f"{record_key(source_file, record_id)}#{pair_index}"


def _text(value) -> str | None:
    """A non-blank string, stripped of surrounding whitespace; None for anything else."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def _required_str(raw: dict, key: str, locator: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RecordError(locator, f"field {key!r} is {'missing' if key not in raw else repr(value)[:60]}; "
                                   "a non-empty string is required")
    return value.strip()


def check_category(category, subcategory, locator: str) -> tuple[str, str]:
    if not isinstance(category, str) or category not in schema.HARMFUL_CATEGORIES:
        raise RecordError(locator, f"unknown harmful_category {category!r}; known: "
                                   f"{', '.join(sorted(schema.HARMFUL_CATEGORIES))}")
    if subcategory not in schema.HARMFUL_CATEGORIES[category]:
        raise RecordError(locator, f"unknown harmful_subcategory {subcategory!r} of {category!r}; known: "
                                   f"{', '.join(schema.HARMFUL_CATEGORIES[category])}")
    return category, subcategory


def describe(caption: str | None, image_safe: bool | None, category: str | None, subcategory: str | None,
             safe_response: str | None) -> tuple[str, str]:
    """(description, description_source) for the text-only view, from the source's own annotations
    first: a caption; an unsafe image's category; for a safe image's unsafe-instruction example, the
    response to its safe instruction (never an example's own response: that would leak the answer
    into the prompt); else the documented template."""
    if caption:
        return caption, "caption"
    if category:
        return schema.CATEGORY_TEMPLATE.format(category=category, subcategory=subcategory), "category"
    if safe_response:
        return safe_response, "safe_response"
    return schema.DESCRIPTION_TEMPLATE, "template"


def vlguard_record(raw, source_file: str, index: int, image_root: str) -> tuple[SourceRecord, list[PairProblem]]:
    """One record of a VLGuard annotation file (``train.json`` / ``test.json``).

    Safe image: a ``safe_instruction`` pair (retain, safe_safes) and an ``unsafe_instruction`` pair
    (forget, safe_unsafes). Unsafe image: one ``instruction`` pair (forget, unsafes) and its
    ``harmful_category`` / ``harmful_subcategory``. An optional ``caption`` describes the image
    (the embedded default has one; VLGuard itself has none)."""
    if not isinstance(raw, dict):
        raise RecordError(f"{source_file}#index={index}", f"a record is an object, got {type(raw).__name__}")
    locator = record_locator(source_file, raw.get("id"), index)
    record_id = _required_str(raw, "id", locator)
    image = _required_str(raw, "image", locator)
    safe = raw.get("safe")
    if not isinstance(safe, bool):
        raise RecordError(locator, f"field 'safe' is {safe!r}; true or false is required")
    category = subcategory = None
    if safe:
        if raw.get("harmful_category") is not None or raw.get("harmful_subcategory") is not None:
            raise RecordError(locator, "a safe image carries a harmful_category")
    else:
        category, subcategory = check_category(raw.get("harmful_category"), raw.get("harmful_subcategory"), locator)
    pairs = raw.get("instr-resp")
    if not isinstance(pairs, list) or not pairs:
        raise RecordError(locator, "no instruction-response pairs ('instr-resp' is "
                                   f"{'missing' if 'instr-resp' not in raw else repr(pairs)[:40]})")
    caption = _text(raw.get("caption"))
    expected = (UNSAFE_KEY, SAFE_KEY) if safe else (UNSAFE_IMAGE_KEY,)
    parsed, problems = [], []
    for i, pair in enumerate(pairs):
        where = pair_locator(source_file, record_id, i)
        keys = [k for k in INSTRUCTION_KEYS if isinstance(pair, dict) and k in pair]
        if not isinstance(pair, dict) or not keys:
            problems.append(PairProblem(where, "no instruction (none of " + ", ".join(INSTRUCTION_KEYS) + ")"))
            continue
        if len(keys) > 1 or keys[0] not in expected:
            problems.append(PairProblem(where, f"{'/'.join(keys)} on a{' safe' if safe else 'n unsafe'} image; "
                                               f"expected {' or '.join(expected)}"))
            continue
        instruction, response = _text(pair[keys[0]]), _text(pair.get("response"))
        if instruction is None:
            problems.append(PairProblem(where, f"empty {keys[0]}"))
            continue
        if response is None:
            problems.append(PairProblem(where, "empty response" if "response" in pair else "no response"))
            continue
        parsed.append((i, keys[0], instruction, response))
    safe_response = next((r for _, k, _, r in parsed if k == SAFE_KEY), None)
    split_file = file_stem(source_file) == TEST_STEM
    examples = []
    for i, key, instruction, response in parsed:
        subset = {UNSAFE_IMAGE_KEY: "unsafes", UNSAFE_KEY: "safe_unsafes", SAFE_KEY: "safe_safes"}[key]
        role = "retain" if key == SAFE_KEY else "forget"
        description, source = describe(caption, safe, category, subcategory,
                                       safe_response if key == UNSAFE_KEY else None)
        examples.append(Example(
            example_id=example_id(source_file, record_id, i), record_id=record_id, source_file=source_file,
            pair_index=i, subset=subset, role=role, split="test" if split_file else role, image_safe=safe,
            harmful_category=category, harmful_subcategory=subcategory, instruction=instruction,
            response=response, description=description, description_source=source))
    record = SourceRecord(
        record_key=record_key(source_file, record_id), record_id=record_id, source_file=source_file, index=index,
        image_path=image, image_url=join_url(image_root, image, locator), image_safe=safe, harmful_category=category,
        harmful_subcategory=subcategory, pairs=len(pairs), examples=tuple(examples),
        split="test" if split_file else "train")
    return record, problems


# An image stored inside a Parquet annotation file (a ``datasets`` Image column of (bytes, path)
# structs: the Hugging Face releases of MLLMU-Bench and CLEAR): the record holds ``{EMBEDDED_KEY: url,
# "path": its stored name}``; the url names the file, the column, the row group, the row in it and the
# file's version when listed (size and modification time or ETag: a file changed since is an error).
EMBEDDED_KEY = "embedded_image"
_EMBEDDED_MARK = "#column="
_EMBEDDED_URL = re.compile(r"^(?P<file>.+)#column=(?P<column>.+)&group=(?P<group>\d+)&row=(?P<row>\d+)"
                           r"&version=(?P<version>[^&]*)$", re.DOTALL)


@dataclasses.dataclass(frozen=True)
class EmbeddedImage:
    file_url: str
    column: str
    group: int      # the Parquet row group
    row: int        # the row within it
    version: str


def embedded_image_url(file_url: str, column: str, group: int, row: int, version: str) -> str:
    return f"{file_url}{_EMBEDDED_MARK}{column}&group={group}&row={row}&version={version}"


def parse_embedded_image_url(url: str) -> EmbeddedImage | None:
    """The embedded image an url names; None for an image file's url."""
    match = _EMBEDDED_URL.match(url) if _EMBEDDED_MARK in url else None
    if match is None:
        return None
    return EmbeddedImage(match["file"], match["column"], int(match["group"]), int(match["row"]), match["version"])


def join_url(root: str, relative: str, locator: str) -> str:
    """``root`` (a URL or path) joined with a relative POSIX path, by the text alone (``files.Root``: a
    path leaving the root, an absolute one, one no file can have is refused; a symlink out of it is
    refused where the image is read, ``image_link_problem``)."""
    images = Root(root.rstrip("/") or root, "the image root")
    problem = images.lexical_problem(relative)
    if problem:
        raise RecordError(locator, f"image path {clip(relative)} {problem}")
    if _EMBEDDED_MARK in relative:  # only the Parquet reader names embedded images
        raise RecordError(locator, f"image path {clip(relative)} holds {_EMBEDDED_MARK!r}")
    return images.path(relative)


def image_link_problem(url: str, root: str) -> str | None:
    """Why the image file at ``url`` (joined by ``join_url``) is not the image root's: reached through a
    symlink to a place outside it (``files.Root``); None on object storage."""
    return Root(root.rstrip("/") or root, "the image root").link_problem(url)


# ---------------------------------------------------------------------------------------------
# The mapped adapter: benchmarks of the same shape (MLLMU-Bench, FIUBench, CLEAR) through a YAML
# field mapping. One source record = one image with one question-answer pair.

MAPPING_FILE = "mapping.yaml"
MAPPING_SCHEMA = {
    "type": "object",
    "additionalProperties": False,  # a misspelt key is an error, not a silently ignored one
    "required": ["files", "fields"],
    "properties": {
        "benchmark": {"type": "string"},
        "image_root": {"type": "string", "minLength": 1},
        "files": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["path"],
            "properties": {"path": {"type": "string", "minLength": 1},
                           "role": {"enum": list(schema.ROLES)},
                           "split": {"enum": ["train", "test"]}}}},
        "fields": {
            "type": "object", "additionalProperties": False,
            "required": ["image", "instruction", "response"],  # no id: the row's index (mapped_record)
            "properties": {k: {"type": "string", "minLength": 1}
                           for k in ("id", "image", "instruction", "response", "role", "description")}},
        "roles": {"type": "object", "additionalProperties": {"enum": list(schema.ROLES)}},
    },
}


@dataclasses.dataclass(frozen=True)
class MappedFile:
    path: str
    role: str | None = None
    split: str = "train"


@dataclasses.dataclass(frozen=True)
class Mapping:
    """A checked field mapping: which source field holds each part of a record."""

    files: tuple[MappedFile, ...]
    fields: dict
    roles: dict
    image_root: str = "images"
    benchmark: str = ""


def parse_mapping(doc, where: str) -> Mapping:
    """The mapping YAML's content, checked: a missing, misspelt or mistyped key is a ``SourceError``
    naming ``where`` and the key's path."""
    import jsonschema

    from benchwright.errors import SourceError

    validator = jsonschema.Draft202012Validator(MAPPING_SCHEMA)
    errors = sorted(validator.iter_errors(doc), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        raise SourceError(f"{where}: invalid mapping: " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors[:5]))
    files = tuple(MappedFile(f["path"], f.get("role"), f.get("split", "train")) for f in doc["files"])
    source = Root(posixpath.dirname(where) or ".", "the source")  # the mapping's paths are relative to its folder
    for what, name in [("image_root", doc.get("image_root", "images"))] + [
            (f"files/{i}/path", f.path) for i, f in enumerate(files)]:
        if what == "image_root" and isinstance(name, str) and posixpath.normpath(name or ".") == ".":
            continue  # the images beside the annotation files
        problem = source.lexical_problem(name)
        if problem:  # a file or an image read from outside the source, or a name no file has
            raise SourceError(f"{where}: invalid mapping: {what} {clip(name)} {problem}")
    keys: dict[str, str] = {}
    for f in files:  # a file's key starts its records' ids: two files with one key would mix their records
        if file_key(f.path) in keys:
            raise SourceError(f"{where}: invalid mapping: files {keys[file_key(f.path)]!r} and {f.path!r} are one "
                              f"annotation file ({file_key(f.path)!r} once the extension is dropped)")
        keys[file_key(f.path)] = f.path
    fields = dict(doc["fields"])
    unroled = [f.path for f in files if f.role is None]
    if unroled and "role" not in fields:
        raise SourceError(f"{where}: invalid mapping: fields/role is required (files without a fixed role: "
                          f"{', '.join(unroled)})")
    return Mapping(files=files, fields=fields, roles=dict(doc.get("roles") or {}),
                   image_root=doc.get("image_root", "images"), benchmark=doc.get("benchmark", ""))


def mapped_record(raw, mapping: Mapping, mapped: MappedFile, index: int, image_root: str) -> SourceRecord:
    """One record of a mapped file: one example; its role from the file or the role field (through
    ``roles``); its split ``test`` for a test file, else its role. Without an id field (the Hugging
    Face releases have no id column) a record's id is its 0-based position in its file (a JSON array's
    element, a JSON Lines record not counting blank lines, a Parquet row): stable for as long as the
    file is, and unique within it."""
    source_file = mapped.path
    if not isinstance(raw, dict):
        raise RecordError(f"{source_file}#index={index}", f"a record is an object, got {type(raw).__name__}")
    f = mapping.fields
    if "id" in f:
        rid = raw.get(f["id"])
        rid = str(rid) if isinstance(rid, (int, str)) and not isinstance(rid, bool) else rid
    else:
        rid = str(index)
    locator = record_locator(source_file, rid, index)
    values = {} if "id" in f else {"id": rid}
    image = raw.get(f["image"])
    embedded = image if isinstance(image, dict) and EMBEDDED_KEY in image else None
    parts = ("instruction", "response") if embedded else ("image", "instruction", "response")
    for part in ("id", *parts) if "id" in f else parts:
        value = raw.get(f[part])
        value = str(value) if part == "id" and isinstance(value, int) and not isinstance(value, bool) else value
        if _text(value) is None:
            what = "missing" if f[part] not in raw else f"empty or not a string ({repr(value)[:40]})"
            raise RecordError(locator if part != "response" else pair_locator(source_file, rid, 0),
                              f"{part} field {f[part]!r} is {what}")
        values[part] = _text(value)
    role = mapped.role
    if role is None:
        value = raw.get(f["role"])
        role = mapping.roles.get(value, value) if isinstance(value, str) else None
        if role not in schema.ROLES:
            raise RecordError(locator, f"role field {f['role']!r} is {value!r}, which maps to no role "
                                       f"({', '.join(schema.ROLES)}; mapping roles: {mapping.roles or 'none'})")
    caption = _text(raw.get(f["description"])) if "description" in f else None
    description, source = describe(caption, None, None, None, None)
    record_id = values["id"]
    split = "test" if mapped.split == "test" else role
    example = Example(
        example_id=example_id(source_file, record_id, 0), record_id=record_id, source_file=source_file,
        pair_index=0, subset=role, role=role, split=split, image_safe=None, harmful_category=None,
        harmful_subcategory=None, instruction=values["instruction"], response=values["response"],
        description=description, description_source=source)
    return SourceRecord(
        record_key=record_key(source_file, record_id), record_id=record_id, source_file=source_file, index=index,
        image_path=(_text(embedded.get("path")) or f"{source_file}#row={index}") if embedded else values["image"],
        image_url=embedded[EMBEDDED_KEY] if embedded else join_url(image_root, values["image"], locator), image_safe=None,
        harmful_category=None, harmful_subcategory=None, pairs=1, examples=(example,),
        split="test" if mapped.split == "test" else "train")
