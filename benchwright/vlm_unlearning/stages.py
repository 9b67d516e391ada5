"""What the VLM unlearning pipeline's stages do to one element (``pipelines/vlm_unlearning.py`` runs them): a record's
duplicates refused, its image read and its three views rendered; the global routing step (every training example
scored, each routing config's routes); each forget example's rows in the routing configs."""
from __future__ import annotations

import io
import itertools

import numpy as np

from benchwright.errors import RecordError
from benchwright.memory import collection_paused
from benchwright.records import SPLIT_COLUMN, Reject
from benchwright.schemas import vlm_unlearning as schema
from benchwright.vlm_unlearning import records as rec
from benchwright.vlm_unlearning import sources

MAX_IMAGE_PIXELS = 50_000_000  # 7,071 x 7,071: far above any VLGuard-style photograph, 150 MB as RGB


def _embeddable(url: str) -> str:
    """The path form ``datasets`` embeds from at write time: plain paths for local files."""
    return url[len("file://"):] if url.startswith("file://") else url


def read_image(url: str, locator: str) -> bytes:
    """The image's bytes, decoded once to prove they are an image; ``RecordError`` otherwise."""
    from PIL import Image, UnidentifiedImageError

    try:
        data = sources.read_image_bytes(url)
    except FileNotFoundError:
        raise RecordError(locator, f"image {url.rsplit('/', 2)[-2:]} is missing") from None
    except OSError as err:
        raise RecordError(locator, f"image cannot be read: {err}") from None
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > MAX_IMAGE_PIXELS:  # checked on the header, before any pixel
                raise RecordError(locator, f"image is {image.width} x {image.height} pixels, over the "
                                           f"{MAX_IMAGE_PIXELS:,}-pixel bound (a decompression bomb)")
            image.load()
    except Image.DecompressionBombError as err:
        raise RecordError(locator, f"image is a decompression bomb: {err}") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as err:
        raise RecordError(locator, f"image is not decodable ({len(data)} bytes): {err}") from None
    return data


def deduplicate(keyed):
    """The records of one id (grouped by ``dedup_key``). One id twice in one file: the first in the file is
    kept, the others are quarantined with their examples. The same id and image in a training file and the
    test file: the same example would be trained on and tested on (a leak), so the training copy is
    quarantined and the test copy kept."""
    _, records = keyed
    kept = []
    for _, in_file in itertools.groupby(sorted(records, key=lambda r: (r.source_file, r.index)),
                                        key=lambda r: r.source_file):
        first, *duplicates = in_file
        kept.append(first)
        for dup in duplicates:
            yield from sources.reject_record(
                f"{dup.locator}[index={dup.index}]",
                f"duplicate id {dup.record_id!r} in {dup.source_file} (records {first.index} and {dup.index}; "
                "the first is kept)", len(dup.examples))
    tested = {r.image_path: r for r in kept if r.split == "test"}
    for record in kept:
        test = tested.get(record.image_path) if record.split != "test" else None
        if test is not None:
            yield from sources.reject_record(
                record.locator, f"id {record.record_id!r} with image {record.image_path!r} is also test record "
                                f"{test.locator} (index {test.index}): the same example in training and test data "
                                "is a leak; the test copy is kept", len(record.examples))
        else:
            yield record


def dedup_key(record, keyed_by_id: bool) -> str:
    """What ``deduplicate`` groups by: the record's id where ids name records across files (VLGuard's, a
    mapping's id field), else its record key (a position in its file names nothing beyond it)."""
    return record.record_id if keyed_by_id else record.record_key


def build_views(record, style: str = "figstep", score: bool = True):
    """One record's rows: {"records": [...], view: [...], "route": [...], "score": [...]}. A missing or
    undecodable image (by Pillow, or by OpenCV for the head's features) refuses the record and its
    examples; an instruction that cannot be rendered (in render ``style``) refuses that example alone.
    With ``score`` each training example's "score" item carries the head's features (computed here,
    where the image is read: the global routing step only fits the head), else its id and role."""
    from benchwright.vlm_unlearning.features import image_features, text_features
    from benchwright.vlm_unlearning.views import render_instruction, view_rows

    try:
        data = read_image(record.image_url, record.locator)
        # the baselines' features of this image too (the card reads them again from this process)
        x_img = image_features(data, record.locator)
    except RecordError as err:
        yield from sources.reject_record(err.locator, err.reason, len(record.examples))
        return
    # an image file travels as its path (the writer embeds it); one stored in a Parquet source, as bytes
    image_value = ({"bytes": data, "path": record.image_path} if rec.parse_embedded_image_url(record.image_url)
                   else {"bytes": None, "path": _embeddable(record.image_url)})
    out = {"records": [], **{v: [] for v in schema.VIEWS}, "route": [], "score": []}
    published = []
    for ex in record.examples:
        try:
            rendered, render = render_instruction(ex.instruction, f"{record.source_file}#id={ex.record_id}"
                                                               f"/instr-resp[{ex.pair_index}]", style)
        except RecordError as err:
            yield Reject("example", err.locator, err.reason)
            continue
        rows = view_rows(ex, record.image_path, image_value, rendered, render)
        for view, row in rows.items():
            out[view].append({**row, SPLIT_COLUMN: ex.split})
        published.append(ex.example_id)
        if ex.split != "test":  # the training examples: the scorer fits on them, forget ones are routed
            out["score"].append({"example_id": ex.example_id, "role": ex.role} if not score else
                                {"example_id": ex.example_id, "role": ex.role, "x_img": x_img,
                                 "x_txt": text_features([ex.instruction])[0]})
        if ex.split == "forget":
            out["route"].append((out["multimodal"][-1], out["text_only"][-1]))
    if not published:
        yield Reject("record", record.locator, "none of its examples could be built")
        return
    out["records"].append({
        "record_key": record.record_key, "record_id": record.record_id, "source_file": record.source_file,
        "image_path": record.image_path, "image_safe": record.image_safe,
        "harmful_category": record.harmful_category, "harmful_subcategory": record.harmful_subcategory,
        "pairs": record.pairs, "example_ids": published, "split": record.split, SPLIT_COLUMN: record.split})
    yield out


def score_examples(examples: list[dict], scores_url: str | None, seed: int) -> dict:
    """The global routing step: scores for the forget examples (the built-in scorer fitted on every
    training example, from the features ``build_views`` put in its "score" items, or a supplied file)
    and each config's routed ids."""
    with collection_paused():  # torch
        from benchwright.vlm_unlearning import routing

    forget = sorted(e["example_id"] for e in examples if e["role"] == "forget")
    if scores_url:
        supplied = routing.read_scores(scores_url)
        scores = {eid: supplied[eid] for eid in forget if eid in supplied}
        source = f"supplied:{scores_url.rsplit('/', 1)[-1]}"
    elif forget:  # routing.visual_pressure of the examples, from the features build_views computed
        scores, source = routing.pressure_from_features(
            [e["example_id"] for e in examples], [e["role"] for e in examples],
            np.stack([e["x_img"] for e in examples]), np.stack([e["x_txt"] for e in examples]), seed)
    else:
        scores, source = {}, "none"
    text_only = {}
    for gamma in schema.GAMMAS:
        text_only[schema.routing_config("modroute", gamma)] = set(routing.route(scores, gamma)[0])
        chosen, _ = routing.random_route(scores, routing.route_size(len(scores), gamma), seed)
        text_only[schema.routing_config("random", gamma)] = set(chosen)
    return {"scores": scores, "source": source, "text_only": text_only, "seed": seed}


def route_example(pair, plan: dict):
    """The routing configs' rows of one forget example."""
    multimodal, text_only = pair
    eid = multimodal["example_id"]
    if eid not in plan["scores"]:
        raise RecordError(eid, f"no routing score for it ({plan['source']})")
    for family in schema.ROUTING_FAMILIES:
        for gamma in schema.GAMMAS:
            config = schema.routing_config(family, gamma)
            routed = text_only if eid in plan["text_only"][config] else multimodal
            source = plan["source"] if family == "modroute" else f"{plan['source']}; random_route(seed={plan['seed']})"
            yield config, {**routed, "routing_score": plan["scores"][eid], "routing_score_source": source,
                           "routed_view": routed["view"], "gamma": gamma}
