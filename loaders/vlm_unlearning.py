"""VLM unlearning loaders: a config (one split or all) as a table or as rows, images as bytes.

``load(build, config, split=None)`` returns a pyarrow Table (columns in ``schemas/vlm_unlearning.py``);
``rows(build, config, split)`` the same as a list of dicts, ``image`` as ``{"bytes", "path"}`` (decode
with Pillow: ``Image.open(io.BytesIO(row["image"]["bytes"]))``). ``build`` is a local build folder.
``export_llava(build, out)`` writes the build as LLaVA's training loader reads it (``benchwright
export BUILD --format llava OUT``).
"""
from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pyarrow as pa

from benchwright import tables
from benchwright.errors import BenchwrightError
from benchwright.layout import MANIFEST
from benchwright.schemas import vlm_unlearning as schema


def load(build: Path | str, config: str, split: str | None = None, columns=None, where=None,
         limit: int | None = None) -> pa.Table:
    """``where`` / ``limit``: only the matching / first rows are read (``benchwright.tables.read_config``)."""
    if config not in schema.CONFIGS:
        raise KeyError(f"unknown config {config!r}; known: {', '.join(schema.CONFIGS)}")
    return tables.read_config(build, config, schema.CONFIGS[config], split=split, columns=columns, where=where,
                              limit=limit)


def rows(build: Path | str, config: str, split: str | None = None, columns=None) -> list[dict]:
    return load(build, config, split, columns).to_pylist()


# --------------------------------------------------------------------------- LLaVA export

LLAVA_SUMMARY = "llava_export.json"
LLAVA_IMAGES = "images"
_EXTENSIONS = {"JPEG": ".jpg", "PNG": ".png", "GIF": ".gif", "WEBP": ".webp", "BMP": ".bmp", "TIFF": ".tif"}


def _image_name(data: bytes) -> str:
    """An image's file name in the export: its sha256 (each distinct image once) and its format's extension."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:  # the header only
        fmt = image.format or ""
    return hashlib.sha256(data).hexdigest() + _EXTENSIONS.get(fmt, f".{fmt.lower() or 'img'}")


def llava_conversations(conversations: list[dict], has_image: bool, where: str) -> tuple[list[dict], int]:
    """(the conversation as LLaVA reads it, how many literal image tokens it holds escaped): the human
    turn leads with the one ``<image>`` exactly when the sample has an image, and no other turn or
    place holds one (a build from before builds escaped them is escaped here)."""
    from benchwright.vlm_unlearning.views import ESCAPED_IMAGE_TOKEN, IMAGE_TOKEN, escape_image_token

    if [c.get("from") for c in conversations] != ["human", "gpt"]:
        raise BenchwrightError(f"{where}: conversations are not one human and one gpt turn")
    human, gpt = conversations[0]["value"], conversations[1]["value"]
    lead = f"{IMAGE_TOKEN}\n"
    if has_image:
        if not human.startswith(lead):
            raise BenchwrightError(f"{where}: a row with an image whose human turn does not lead with {lead!r}")
        human = human[len(lead):]
    out = [{"from": "human", "value": (lead if has_image else "") + escape_image_token(human)},
           {"from": "gpt", "value": escape_image_token(gpt)}]
    return out, sum(turn["value"].count(ESCAPED_IMAGE_TOKEN) for turn in out)


def export_llava(build: Path | str, out: Path | str) -> dict:
    """A local build as LLaVA's training loader reads it (``LazySupervisedDataset`` in
    haotian-liu/LLaVA ``llava/train/train.py``): ``OUT/<config>/<split>.json``, each a JSON list of
    ``{"id", "image", "conversations", ...}``, and ``OUT/images/`` with every distinct image once
    (``<sha256>.<ext>``, the build's bytes unchanged). ``image`` names a file under ``OUT/images`` (LLaVA's
    ``--image_folder``) and is **absent** on a row without one (LLaVA decides on ``'image' in sample``);
    the human turn holds the one ``<image>`` exactly then. Rows carry ``view``, ``role``, ``subset``
    (and ``routed_view`` in a routing config) besides; LLaVA ignores them. Every view config's forget /
    retain / test splits and every routing config's forget split; rows sorted by ``id``; ASCII JSON
    (LLaVA opens the file without an encoding). Written to a folder beside ``OUT`` and moved into place
    when complete; an ``OUT`` that exists must be an earlier LLaVA export (it is replaced) or empty."""
    import json
    import os
    import shutil

    import pyarrow.parquet as pq

    build, out = Path(build), Path(out)
    if out.exists() and any(out.iterdir()) and not (out / LLAVA_SUMMARY).is_file():
        raise BenchwrightError(f"{out}: exists and is not a LLaVA export ({LLAVA_SUMMARY} missing); "
                               "give an empty or new folder")
    staging = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / LLAVA_IMAGES).mkdir(parents=True)
    try:
        written: set[str] = set()
        files, escaped = {}, 0
        columns = ["example_id", "image", "conversations", "view", "role", "subset"]
        for config in (*schema.VIEWS, *schema.ROUTING_CONFIGS):
            for split in schema.VIEW_SPLITS if config in schema.VIEWS else ("forget",):
                rows = []
                for shard in sorted((build / config).glob(f"{split}-*.parquet")):  # a batch of images at a time
                    extra = ["routed_view"] if config in schema.ROUTING_CONFIGS else []
                    for batch in pq.ParquetFile(shard).iter_batches(batch_size=256, columns=columns + extra):
                        for row in batch.to_pylist():
                            where = f"{config}/{split}#example_id={row['example_id']}"
                            data = (row["image"] or {}).get("bytes")
                            if row["image"] is not None and data is None:
                                raise BenchwrightError(f"{where}: an image without bytes in the build")
                            sample = {"id": row["example_id"], "view": row["view"], "role": row["role"],
                                      "subset": row["subset"], **{k: row[k] for k in extra}}
                            sample["conversations"], n = llava_conversations(row["conversations"], data is not None, where)
                            escaped += n
                            if data is not None:
                                name = _image_name(data)
                                if name not in written:
                                    (staging / LLAVA_IMAGES / name).write_bytes(data)
                                    written.add(name)
                                sample["image"] = name
                            rows.append(sample)
                if not rows:
                    continue
                rows.sort(key=lambda r: r["id"])
                (staging / config).mkdir(exist_ok=True)
                (staging / config / f"{split}.json").write_text(
                    json.dumps(rows, ensure_ascii=True, indent=1, sort_keys=True) + "\n", encoding="ascii")
                files[f"{config}/{split}.json"] = {"rows": len(rows), "with_image": sum("image" in r for r in rows)}
        summary = {"format": "llava", "build_shards_sha256": _shards_digest(build), "files": files, "images": len(written),
                   "escaped_image_tokens": escaped, "image_folder": LLAVA_IMAGES,
                   "train_with": "--data_path OUT/<config>/<split>.json --image_folder OUT/images "
                                 "(e.g. OUT/modroute_g0.5/forget.json)"}
        (staging / LLAVA_SUMMARY).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {**summary, "build": str(build), "out": str(out)}


def _shards_digest(build: Path) -> str:
    """One sha256 over the build's Parquet shards as its manifest lists them (path and sha256): which
    build an export was made from, the same on every machine."""
    import json

    manifest = json.loads((build / MANIFEST).read_text(encoding="utf-8"))
    shards = sorted((f["path"], f["sha256"]) for f in manifest["files"] if f["path"].endswith(".parquet"))
    return hashlib.sha256(json.dumps(shards).encode()).hexdigest()
