"""A VLM unlearning build from the real VLGuard annotations with a generated image root: missing and
undecodable images and a duplicated id quarantined with the record id, counts reconciled per record
and per pair, routing configs from supplied scores, the three views of each example, the loader."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchwright import registry
from benchwright.hashing import stable_hash64
from benchwright.layout import MANIFEST
from benchwright.loaders.vlm_unlearning import load, rows
from benchwright.schemas import vlm_unlearning as schema
from benchwright.vlm_unlearning.routing import random_route, route_size
from benchwright.vlm_unlearning.views import IMAGE_ONLY_PROMPT, render_text
from tests.builds import build_dataset

REPO = Path(__file__).resolve().parents[1]

TRAIN_HEAD, TEST_HEAD = 24, 12
DUPLICATE_ID = "Ads_303871"  # the real train file holds this id twice (two different records)
EMPTY_RESPONSE_IDS = ("HOD_img_hod_004768", "PrivacyAlert_test_18")  # real test records with an empty response
LEAK_ID = "Ads_295003"  # one of the 8 ids the real release has in train.json and test.json with the same image


def _image_bytes(path: str) -> bytes:
    h = stable_hash64(path)
    image = Image.new("RGB", (24 + h % 40, 24 + (h >> 8) % 40), ((h >> 16) % 256, (h >> 24) % 256, (h >> 32) % 256))
    out = io.BytesIO()
    image.save(out, format="PNG" if path.endswith(".png") else "JPEG")
    return out.getvalue()


@pytest.fixture(scope="module")
def real(tmp_path_factory, fixtures_dir):
    """A slice of the real annotation files (unchanged records), images written per record path,
    two missing, one undecodable and one OpenCV cannot read; forget scores supplied; built."""
    root = tmp_path_factory.mktemp("vlguard") / "raw"
    train_all = json.loads((fixtures_dir / "vlguard" / "train.json").read_text())
    test_all = json.loads((fixtures_dir / "vlguard" / "test.json").read_text())
    train = train_all[:TRAIN_HEAD] + [r for r in train_all if r["id"] == LEAK_ID] + [
        r for r in train_all if r["id"] == DUPLICATE_ID]
    test = test_all[:TEST_HEAD] + [r for r in test_all if r["id"] in EMPTY_RESPONSE_IDS + (LEAK_ID,)]
    for stem, records in (("train", train), ("test", test)):
        (root / stem).mkdir(parents=True)
        (root / f"{stem}.json").write_text(json.dumps(records, indent=1))
        for r in records:
            path = root / stem / r["image"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(_image_bytes(r["image"]))
    broken = {"missing": [train[0], train[1]], "undecodable": [test[0]], "not_for_opencv": [train[2]]}
    for r in broken["missing"]:
        (root / "train" / r["image"]).unlink()
    (root / "test" / test[0]["image"]).write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    pcx = io.BytesIO()  # Pillow reads PCX, OpenCV does not: the head's features could not be taken
    Image.new("RGB", (32, 32), (200, 40, 90)).save(pcx, format="PCX")
    (root / "train" / train[2]["image"]).write_bytes(pcx.getvalue())
    broken_ids = {(stem, r["id"]) for stem, rs in (("train", broken["missing"] + broken["not_for_opencv"]),
                                                   ("test", broken["undecodable"])) for r in rs}
    # scores for the forget examples a build will publish: (train unsafes and safe_unsafes)
    forget = [f"train/{r['id']}#{i}" for r in train if ("train", r["id"]) not in broken_ids and r["id"] != LEAK_ID
              for i, p in enumerate(r["instr-resp"]) if "safe_instruction" not in p]
    scores = {eid: round(float(np.random.default_rng(stable_hash64(eid) % 2**32).uniform()), 6) for eid in forget}
    scores_file = root.parent / "scores.json"
    scores_file.write_text(json.dumps(scores))
    out = tmp_path_factory.mktemp("vlguard-out")
    dataset = registry.get("vlm_unlearning").configured(routing_scores=str(scores_file), format="vlguard")
    built = build_dataset(dataset, root, out, max_bad_fraction=1.0)
    return {"root": root, "train": train, "test": test, "broken": broken_ids, "scores": scores, "built": built}


def _quarantine(built: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((built / "_build" / "quarantine").glob("*.jsonl"))
            for line in f.read_text().splitlines()]


def test_bad_images_and_a_duplicate_id_are_quarantined_with_the_record_id(real):
    q = _quarantine(real["built"])
    records = {r["locator"]: r["reason"] for r in q if r["unit"] == "record"}
    train, test = real["train"], real["test"]
    assert "is missing" in records[f"train.json#id={train[0]['id']}"]
    assert "is missing" in records[f"train.json#id={train[1]['id']}"]
    assert "not decodable" in records[f"test.json#id={test[0]['id']}"]
    # quarantined in the pipeline, not failing the card's baselines (they take the same features)
    assert "not an image OpenCV can decode" in records[f"train.json#id={train[2]['id']}"]
    dup_index = [i for i, r in enumerate(train) if r["id"] == DUPLICATE_ID][1]
    dup = records[f"train.json#id={DUPLICATE_ID}[index={dup_index}]"]
    assert "duplicate id" in dup and "the first is kept" in dup
    empties = {r["locator"] for r in q if r["reason"] == "empty response"}
    assert empties == {f"test.json#id={i}/instr-resp[0]" for i in EMPTY_RESPONSE_IDS}
    # the real release's leak: the same id and image in both files; the training copy is quarantined
    assert "is a leak; the test copy is kept" in records[f"train.json#id={LEAK_ID}"]
    assert f"test.json#id={LEAK_ID}" not in records


def test_the_card_and_its_baselines_are_computed_beside_the_checks(real):
    """The card's baselines (they train heads) are computed by the exports child while the driver
    computes the statistics and the checks: the manifest says how long they took there."""
    manifest = json.loads((real["built"] / MANIFEST).read_text())
    assert manifest["timings"]["card_beside_checks_s"] > 0
    # the settings it was built with are recorded (issue 26: one Config per dataset)
    assert manifest["options"]["settings"] == {"format": "vlguard", "routing_scores": str(real["root"].parent /
                                                                                          "scores.json"),
                                               "render": "figstep", "routing_seed": 0}
    card = (real["built"] / "README.md").read_text()
    assert "| multimodal | gradient ascent |" in card and (real["built"] / "_build" / "figures").is_dir()


def test_the_table_checks_pass_without_importing_torch(real):
    """The routing configs' checks recount the routes (benchwright.vlm_unlearning.routes) without torch, whose
    import (~1 s) only the scores need: ``benchwright validate`` of a build never pays it."""
    code = ("import json, sys\n"
            "from benchwright.validation.vlm_unlearning import table_checks\n"
            f"results = table_checks({str(real['built'])!r})\n"
            "print(json.dumps({'torch': 'torch' in sys.modules, 'failed': [r for r in results if not r['ok']],"
            " 'routing': sum('text-only' in r['check'] for r in results)}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"torch": False, "failed": [], "routing": 6}


def test_counts_reconcile_per_record_and_per_pair(real):
    train, test, broken = real["train"], real["test"], real["broken"]
    manifest = json.loads((real["built"] / MANIFEST).read_text())
    units = manifest["reconciliation"]["units"]
    n_records = len(train) + len(test)
    n_pairs = sum(len(r["instr-resp"]) for r in train + test)
    bad_records = len(broken) + 2  # and the duplicate and the leak
    empty = len(EMPTY_RESPONSE_IDS)
    dup_pairs = len(train[-1]["instr-resp"]) + len(next(r for r in train if r["id"] == LEAK_ID)["instr-resp"])
    broken_pairs = sum(len(r["instr-resp"]) for stem, rs in (("train", train), ("test", test))
                       for r in rs if (stem, r["id"]) in broken)
    assert units["record"] == {"read": n_records, "written": n_records - bad_records, "quarantined": bad_records,
                               "filtered": 0, "bad_fraction": units["record"]["bad_fraction"]}
    assert units["example"]["read"] == n_pairs
    assert units["example"]["quarantined"] == broken_pairs + dup_pairs + empty
    assert units["example"]["written"] == n_pairs - broken_pairs - dup_pairs - empty
    for view in schema.VIEWS:
        assert load(real["built"], view).num_rows == units["example"]["written"]


def test_splits_follow_vlguard_roles_and_categories_are_kept(real):
    built = real["built"]
    forget = rows(built, "multimodal", "forget", columns=["subset", "role", "harmful_category", "image_safe"])
    retain = rows(built, "multimodal", "retain", columns=["subset", "role"])
    test = rows(built, "multimodal", "test", columns=["subset", "example_id"])
    assert {(r["subset"], r["role"]) for r in forget} == {("unsafes", "forget"), ("safe_unsafes", "forget")}
    assert all((r["harmful_category"] is not None) == (r["subset"] == "unsafes") for r in forget)
    assert {(r["subset"], r["role"]) for r in retain} == {("safe_safes", "retain")}
    assert all(r["example_id"].startswith("test/") for r in test)
    records = rows(built, "records", columns=["record_key", "split", "pairs", "example_ids"])
    assert {r["split"] for r in records} == {"train", "test"}
    assert sum(len(r["example_ids"]) for r in records) == load(built, "multimodal").num_rows


def test_the_three_views_of_an_example(real):
    built = real["built"]
    eid = sorted(load(built, "multimodal", "forget", columns=["example_id"]).column("example_id").to_pylist())[0]
    views = {v: rows(built, v)[[r["example_id"] for r in rows(built, v, columns=["example_id"])].index(eid)]
             for v in schema.VIEWS}
    mm, to, io_ = views["multimodal"], views["text_only"], views["image_only"]
    assert mm["instruction"] == to["instruction"] == io_["instruction"]
    # multimodal: the original image file's bytes, untouched
    record_id = eid.split("/", 1)[1].rsplit("#", 1)[0]
    original = next(r for r in real["train"] if r["id"] == record_id)
    assert mm["image"]["bytes"] == (real["root"] / "train" / original["image"]).read_bytes()
    assert mm["conversations"][0] == {"from": "human", "value": "<image>\n" + mm["instruction"]}
    # text-only: no image, the description in the prompt, no <image> token
    assert to["image"] is None and to["prompt"] == f"[Image description: {to['description']}]\n{to['instruction']}"
    assert "<image>" not in to["conversations"][0]["value"]
    # image-only: the instruction rendered, a neutral prompt, regenerable from the stored parameters
    assert io_["prompt"] == IMAGE_ONLY_PROMPT and io_["render"]["text"].replace("\n", " ") == io_["instruction"]
    assert render_text(io_["render"]) == io_["image"]["bytes"]
    with Image.open(io.BytesIO(io_["image"]["bytes"])) as im:
        assert im.size == (760, 760)
    for view in views.values():
        assert view["conversations"][1] == {"from": "gpt", "value": view["response"]}


def test_routing_configs_route_the_supplied_scores(real):
    built, scores = real["built"], real["scores"]
    forget = sorted(load(built, "multimodal", "forget", columns=["example_id"]).column("example_id").to_pylist())
    assert sorted(scores) == forget
    for gamma in schema.GAMMAS:
        k = route_size(len(forget), gamma)
        top = set(sorted(scores, key=lambda e: (-scores[e], e))[:k])
        mod = {r["example_id"]: r for r in rows(built, f"modroute_g{gamma:g}")}
        assert sorted(mod) == forget
        assert {e for e, r in mod.items() if r["routed_view"] == "text_only"} == top
        assert all(r["routing_score"] == scores[e] and r["routing_score_source"] == "supplied:scores.json"
                   for e, r in mod.items())
        # a text-only routed row is the text-only view: no image, the description in the prompt
        assert all((r["image"] is None) == (r["routed_view"] == "text_only") == r["prompt"].startswith("[Image")
                   for r in mod.values())
        rnd = {r["example_id"]: r for r in rows(built, f"random_g{gamma:g}", columns=["example_id", "routed_view",
                                                                                       "routing_score", "gamma"])}
        chosen = {e for e, r in rnd.items() if r["routed_view"] == "text_only"}
        assert len(chosen) == k and chosen == set(random_route(forget, k, 0)[0])
        # random_g*'s routing_score is the example's visual pressure, as in modroute_g*: not a random draw
        assert all(r["routing_score"] == scores[e] and r["gamma"] == gamma for e, r in rnd.items())
    # ... and the schema says so (its column table is the columns' documentation)
    documented = schema.__doc__.split("``routing_score``", 1)[1].split("``routing_score_source``", 1)[0]
    assert "the same in ``modroute_g*`` and ``random_g*``" in " ".join(documented.split())
    assert "draw" not in documented


def docstring_mapping() -> str:
    """The mapping example of ``benchwright/vlm_unlearning/sources.py``'s docstring, verbatim."""
    from benchwright.vlm_unlearning import sources

    return sources.__doc__.split("```yaml\n", 1)[1].split("```", 1)[0]


# the docstring's annotation files: forget10 and retain90 have a fixed role (no `kind` field); test's
# records name theirs in `kind` (source values mapped through `roles`)
DOC_FILES = {"forget10": [0, 1, 2], "retain90": [3, 4, 5], "test": [6, 7, 8, 9]}


def _doc_row(i: int, file: str) -> dict:
    row = {"id": f"person{i}", "image_path": f"p{i}.png", "question": f"What is the name of person {i}?",
           "answer": f"Name {i}", "caption": f"Portrait {i}."}
    if i == 1:    # LLaVA's image token, literally, in a question and in an answer
        row["question"] = "Who is the <image> person on the left?"
    if i == 4:
        row["answer"] = "The tag <image> marks where a picture goes."
    return row | ({"kind": "forget10" if i % 2 == 0 else "retain90"} if file == "test" else {})


@pytest.fixture(scope="module")
def doc_build(tmp_path_factory) -> tuple[Path, Path]:
    """(work folder, build) of the docstring's mapping over JSON Lines, with supplied routing scores."""
    from benchwright.cli import main as cli_main

    tmp_path = tmp_path_factory.mktemp("docstring-jsonl")
    raw = tmp_path / "raw"
    (raw / "images").mkdir(parents=True)
    (raw / "mapping.yaml").write_text(docstring_mapping())
    for file, ids in DOC_FILES.items():
        for i in ids:
            (raw / "images" / f"p{i}.png").write_bytes(_image_bytes(f"p{i}.png"))
        (raw / f"{file}.jsonl").write_text("".join(json.dumps(_doc_row(i, file)) + "\n" for i in ids))
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps({"example_id": f"forget10/person{i}#0", "score": s}) + "\n"
                              for i, s in zip(DOC_FILES["forget10"], (0.9, 0.1, 0.5))))
    assert cli_main(["build", "vlm_unlearning", "--source", str(raw), "--out", str(tmp_path / "out"),
                     "--routing-scores", str(scores)]) == 0
    return tmp_path, tmp_path / "out" / "vlm_unlearning"


def test_the_docstrings_mapped_source_builds_in_json_lines(doc_build, tmp_path):
    """The mapping example in the sources' docstring, as written, over JSON Lines files: fixed-role
    files without the role field, a test file whose rows name their role; built (the card's
    baselines score its test rows) and evaluated against the build."""
    from benchwright.cli import main as cli_main

    built = doc_build[1]
    text = {r["example_id"]: r for r in rows(built, "text_only")}
    assert sorted(text) == sorted(f"{f}/person{i}#0" for f, ids in DOC_FILES.items() for i in ids)
    assert text["forget10/person0#0"]["prompt"] == "[Image description: Portrait 0.]\nWhat is the name of person 0?"
    test = {r["example_id"]: (r["subset"], r["role"]) for r in rows(built, "multimodal", "test", columns=["example_id", "subset", "role"])}
    assert test == {"test/person6#0": ("forget", "forget"), "test/person7#0": ("retain", "retain"),
                    "test/person8#0": ("forget", "forget"), "test/person9#0": ("retain", "retain")}
    assert {r["example_id"] for r in rows(built, "multimodal", "retain", columns=["example_id"])} == \
        {f"retain90/person{i}#0" for i in (3, 4, 5)}
    routed = {r["example_id"]: r["routed_view"] for r in rows(built, "modroute_g0.25", columns=["example_id", "routed_view"])}
    assert routed == {"forget10/person0#0": "text_only", "forget10/person1#0": "multimodal",
                      "forget10/person2#0": "multimodal"}
    card = (built / "README.md").read_text()
    assert "| multimodal | gradient ascent |" in card  # the card's baselines scored the test rows
    # a literal <image> stays in the source's text columns; the model-facing text holds it escaped
    views_ = {v: {r["example_id"]: r for r in rows(built, v, columns=["example_id", "instruction", "response",
                                                                       "prompt", "conversations"])}
              for v in schema.VIEWS}
    one, four = views_["multimodal"]["forget10/person1#0"], views_["multimodal"]["retain90/person4#0"]
    assert one["instruction"] == "Who is the <image> person on the left?"
    assert one["prompt"] == "Who is the &lt;image&gt; person on the left?"
    assert four["response"] == "The tag <image> marks where a picture goes."
    for view, by_id in views_.items():
        for eid, row in by_id.items():
            assert [c["value"].count("<image>") for c in row["conversations"]] == [int(view != "text_only"), 0], (view, eid)
            assert "<image>" not in row["prompt"]
    # a model's answers to the test rows, scored against the build: the test sets by role
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"example_id": eid, "view": "multimodal",
                                        "response": "I'm sorry, I can't." if i % 2 else "Sure: Name."}) + "\n"
                            for i, eid in enumerate(sorted(test))))
    assert cli_main(["evaluate", "vlm_unlearning", "--pred", str(pred), "--data", str(built),
                     "--out", str(tmp_path / "m.json")]) == 0
    sets = json.loads((tmp_path / "m.json").read_text())["groups"]["multimodal"]["sets"]
    assert (sets["test_forget"]["answered"], sets["test_forget"]["asr"]) == (2, 1.0)
    assert (sets["test_retain"]["answered"], sets["test_retain"]["over_refusal"]) == (2, 1.0)
    assert sets["forget"]["missing"] == 3 and sets["retain"]["missing"] == 3


def test_the_docstrings_mapped_source_builds_in_parquet_with_embedded_images(tmp_path):
    """The docstring's mapping over Parquet files in the form of the Hugging Face releases
    (MLLMU-Bench, CLEAR): written by ``datasets``, the Image column holding the bytes, in several row
    groups; one row holds only a path (a file under the image root), one holds bytes that are not an
    image; the test file's rows name their role. The images are read from the file's rows (never
    loaded on the driver) and published byte for byte."""
    import datasets
    import pyarrow.parquet as pq

    from benchwright.cli import main as cli_main
    from benchwright.vlm_unlearning import sources

    raw = tmp_path / "raw"
    (raw / "images").mkdir(parents=True)
    (raw / "images" / "on_disk.png").write_bytes(_image_bytes("on_disk.png"))
    features = datasets.Features({"id": datasets.Value("string"), "image_path": datasets.Image(),
                                  "question": datasets.Value("string"), "answer": datasets.Value("string"),
                                  "caption": datasets.Value("string")})

    def release(ids, images, kinds=None):
        columns = {"id": [f"person{i}" for i in ids], "image_path": images,
                   "question": [f"Who is person {i}?" for i in ids], "answer": [f"Name {i}" for i in ids],
                   "caption": [f"Portrait {i}." for i in ids]}
        if kinds is None:
            return datasets.Dataset.from_dict(columns, features=features)
        return datasets.Dataset.from_dict(columns | {"kind": kinds}, features=datasets.Features(
            {**features, "kind": datasets.Value("string")}))

    images = [{"bytes": _image_bytes(f"p{i}.png"), "path": f"p{i}.png"} for i in range(5)]
    images += [{"bytes": None, "path": "on_disk.png"}, {"bytes": b"not an image", "path": "broken.png"}]
    table = release(range(7), images)
    table.to_parquet(str(raw / "forget10.parquet"), batch_size=3)
    assert pq.ParquetFile(raw / "forget10.parquet").num_row_groups == 3
    retain = release((7, 8), [{"bytes": _image_bytes(f"r{i}.jpg"), "path": None} for i in range(2)])
    retain.to_parquet(str(raw / "retain90.parquet"))
    release((9, 10), [{"bytes": _image_bytes(f"t{i}.png"), "path": None} for i in range(2)],
            ["forget10", "retain90"]).to_parquet(str(raw / "test.parquet"))
    (raw / "mapping.yaml").write_text(docstring_mapping().replace(".jsonl", ".parquet"))

    _, listed, _ = sources.list_records(str(raw))
    embedded = [r["image_path"] for _, _, r in listed if isinstance(r["image_path"], dict)]
    assert len(embedded) == 10 and all(set(e) == {"embedded_image", "path"} for e in embedded)  # no bytes held
    assert sources.read_image_bytes(embedded[4]["embedded_image"]) == images[4]["bytes"]    # second row group
    urls = [e["embedded_image"] for e in embedded[:5]]
    assert [sources.read_image_bytes(u) for u in urls[::-1]] == [images[i]["bytes"] for i in (4, 3, 2, 1, 0)]

    out = tmp_path / "out"
    assert cli_main(["build", "vlm_unlearning", "--source", str(raw), "--out", str(out),
                     "--max-bad-fraction", "0.2"]) == 0
    built = out / "vlm_unlearning"
    multimodal = {r["record_id"]: r for r in rows(built, "multimodal")}
    assert sorted(multimodal) == sorted(f"person{i}" for i in (0, 1, 2, 3, 4, 5, 7, 8, 9, 10))
    for i in range(5):
        assert multimodal[f"person{i}"]["image"]["bytes"] == images[i]["bytes"]
    assert multimodal["person5"]["image"]["bytes"] == _image_bytes("on_disk.png")
    assert {r["record_id"] for r in rows(built, "multimodal", "retain", columns=["record_id"])} == {"person7", "person8"}
    assert {(r["record_id"], r["subset"]) for r in rows(built, "multimodal", "test", columns=["record_id", "subset"])} == \
        {("person9", "forget"), ("person10", "retain")}
    quarantine = [json.loads(line) for f in sorted((built / "_build" / "quarantine").glob("*.jsonl"))
                  for line in f.read_text().splitlines()]
    records = [q for q in quarantine if q["unit"] == "record"]
    assert len(records) == 1 and records[0]["locator"] == "forget10.parquet#id=person6"
    assert "not decodable" in records[0]["reason"]
    units = json.loads((built / MANIFEST).read_text())["reconciliation"]["units"]
    assert units["record"] | units["example"] == {"read": 11, "written": 10, "quarantined": 1, "filtered": 0,
                                                  "bad_fraction": round(1 / 11, 6)}
    assert cli_main(["validate", str(built)]) == 0

    # a file rewritten after it was listed is an error, never another file's bytes under the old rows
    import os

    # (a row group read before the change still serves the bytes of the version its rows were listed from)
    retain.to_parquet(str(raw / "forget10.parquet"))
    os.utime(raw / "forget10.parquet", ns=(1, 1))
    sources._row_group_images.cache_clear()
    with pytest.raises(OSError, match="changed since it was listed"):
        sources.read_image_bytes(urls[1])
    _, relisted, _ = sources.list_records(str(raw))
    first = next(r["image_path"]["embedded_image"] for f, _, r in relisted if f.startswith("forget10"))
    assert sources.read_image_bytes(first) == _image_bytes("r0.jpg")  # a new listing reads the new file
    # a path written in a record cannot pose as an embedded image
    from benchwright.errors import RecordError
    from benchwright.vlm_unlearning.records import join_url

    with pytest.raises(RecordError, match="holds '#column='"):
        join_url(str(raw / "images"), "x.parquet#column=image&group=0&row=0&version=1", "data.jsonl#id=x")


class ByteTokenizer:
    """A stand-in for LLaVA-1.5's Llama tokenizer (whose model cannot be downloaded here) with what
    LLaVA's data code calls: one token per UTF-8 byte, a BOS before each text and "</s>" as one token
    (the EOS), as the Llama tokenizer does, so LLaVA's target masking adds up; pad 0."""

    bos_token_id, eos_token_id, pad_token_id = 1, 2, 0
    model_max_length = 4096
    legacy = True

    def encode(self, text: str) -> list[int]:
        ids = [self.bos_token_id]
        for n, part in enumerate(text.split("</s>")):
            ids += ([self.eos_token_id] if n else []) + [b + 3 for b in part.encode("utf-8")]
        return ids

    def __call__(self, text, return_tensors=None, padding=None, max_length=None, truncation=False):
        import types

        import torch

        if isinstance(text, str):
            ids = self.encode(text)
            return types.SimpleNamespace(input_ids=torch.tensor([ids]) if return_tensors == "pt" else ids)
        rows_ = [self.encode(t)[:max_length] if truncation else self.encode(t) for t in text]
        width = max(map(len, rows_))
        return types.SimpleNamespace(input_ids=torch.tensor([r + [self.pad_token_id] * (width - len(r)) for r in rows_]))


class ImageProcessor:
    """A stand-in for the CLIP image processor: keeps the image it was given (the test compares it with
    the build's) and returns it as a 336x336 tensor."""

    image_mean = (0.48145466, 0.4578275, 0.40821073)
    crop_size = {"height": 336, "width": 336}

    def __init__(self):
        self.seen = []

    def preprocess(self, image, return_tensors=None):
        import torch

        self.seen.append(np.asarray(image))
        pixels = np.asarray(image.resize((336, 336)), dtype=np.float32) / 255.0
        return {"pixel_values": torch.from_numpy(pixels).permute(2, 0, 1)[None]}


def test_the_llava_export_loads_in_llavas_own_data_code(doc_build, fixtures_dir, monkeypatch):
    """``benchwright export BUILD --format llava OUT`` read by LLaVA's own training data code
    (``LazySupervisedDataset``, ``preprocess_multimodal``, ``preprocess_v1``, ``tokenizer_image_token``,
    ``DataCollatorForSupervisedDataset``: tests/fixtures/llava, verbatim): every row of every file
    loads; a row has an image exactly when the build's row has one, and that image is the build's;
    its input holds one image token then and none otherwise, even where the question or answer holds
    a literal ``<image>``; the answer is the training target."""
    import torch

    from benchwright.cli import main as cli_main

    monkeypatch.syspath_prepend(str(fixtures_dir / "llava"))
    from llava import train_data as llava

    work, built = doc_build
    out = work / "llava"
    assert cli_main(["export", str(built), "--format", "llava", str(out)]) == 0
    summary = json.loads((out / "llava_export.json").read_text())
    assert len(summary["files"]) == 15 and summary["escaped_image_tokens"] > 0
    tokenizer, checked = ByteTokenizer(), 0
    for name in summary["files"]:
        config, split = name[:-len(".json")].split("/")
        processor = ImageProcessor()
        data_args = llava.DataArguments(data_path=str(out / name), is_multimodal=True, image_folder=str(out / "images"))
        data_args.image_processor, data_args.mm_use_im_start_end = processor, False
        dataset = llava.LazySupervisedDataset(str(out / name), tokenizer, data_args)
        build_rows = {r["example_id"]: r for r in rows(built, config, split)}
        samples = dataset.list_data_dict
        assert sorted(s["id"] for s in samples) == sorted(build_rows)
        items = [dataset[i] for i in range(len(dataset))]
        images = iter(processor.seen)
        for sample, item, length in zip(samples, items, dataset.modality_lengths):
            row = build_rows[sample["id"]]
            has_image = row["image"] is not None
            assert ("image" in sample) == has_image == (length > 0)
            assert int((item["input_ids"] == llava.IMAGE_TOKEN_INDEX).sum()) == int(has_image)
            if has_image:  # the file LLaVA opened holds the build's image
                with Image.open(io.BytesIO(row["image"]["bytes"])) as im:
                    assert np.array_equal(next(images), np.asarray(im.convert("RGB")))
            target = bytes(int(t) - 3 for t in item["labels"] if t >= 3).decode("utf-8")
            assert target.strip() == row["conversations"][1]["value"].replace("<image>", "&lt;image&gt;")
            checked += 1
        batch = llava.DataCollatorForSupervisedDataset(tokenizer)(items)
        assert batch["images"].shape == (len(items), 3, 336, 336) and batch["input_ids"].shape[0] == len(items)
        assert torch.equal(batch["images"][0], items[0]["image"])
    assert checked == sum(f["rows"] for f in summary["files"].values()) == 3 * 10 + 6 * 3
    literal = json.loads((out / "multimodal" / "forget.json").read_text())
    one = next(s for s in literal if s["id"] == "forget10/person1#0")
    assert one["conversations"][0]["value"] == "<image>\nWho is the &lt;image&gt; person on the left?"
    # the hazard the escaping removes, in LLaVA's own code: a literal token in an answer becomes a second
    # image (preprocess_multimodal moves it to the front of its turn); in a text-only row, an image
    # the row does not have
    data_args = llava.DataArguments(is_multimodal=True)
    data_args.mm_use_im_start_end = False
    answer = [[{"from": "human", "value": "<image>\nWhat goes here?"},
               {"from": "gpt", "value": "The tag <image> marks where a picture goes."}]]
    ids = llava.preprocess(llava.preprocess_multimodal(answer, data_args), tokenizer, has_image=True)["input_ids"][0]
    assert int((ids == llava.IMAGE_TOKEN_INDEX).sum()) == 2
    question = [[{"from": "human", "value": "Who is the <image> person on the left?"}, {"from": "gpt", "value": "A."}]]
    ids = llava.tokenizer_image_token(llava.conversation_lib.default_conversation.copy().get_prompt() +
                                      question[0][0]["value"], tokenizer)
    assert ids.count(llava.IMAGE_TOKEN_INDEX) == 1
    # a second export replaces the first; a folder that is not an export is refused
    assert cli_main(["export", str(built), "--format", "llava", str(out)]) == 0
    (work / "other").mkdir()
    (work / "other" / "notes.txt").write_text("mine")
    assert cli_main(["export", str(built), "--format", "llava", str(work / "other")]) == 2
    assert (work / "other" / "notes.txt").read_text() == "mine"
