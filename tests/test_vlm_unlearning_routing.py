"""ModRoute routing: visual pressure follows the modality that carries the forget signal, is
deterministic and order-free; user score files are read strictly; routes and random routes."""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import skimage.data

from benchwright.errors import RecordError, SourceError
from benchwright.vlm_unlearning.features import IMAGE_DIM, TEXT_DIM, image_features, text_features
from benchwright.vlm_unlearning.routing import random_route, read_scores, route, route_size, visual_pressure

# real photographs shipped inside scikit-image's wheel (read as files; no loader that downloads)
PHOTOS = Path(skimage.data.__file__).parent
N = 40


def _crops(name: str, n: int, seed: int, size: int = 96) -> list[bytes]:
    img = cv2.imread(str(PHOTOS / name), cv2.IMREAD_COLOR)
    rng = np.random.default_rng(seed)
    h, w = img.shape[:2]
    out = []
    for _ in range(n):
        y, x = int(rng.integers(0, h - size)), int(rng.integers(0, w - size))
        out.append(cv2.imencode(".png", img[y:y + size, x:x + size])[1].tobytes())
    return out


@pytest.fixture(scope="module")
def two_signal_examples(fixtures_dir) -> list[dict]:
    """Half the examples carry the forget/retain role in the image only (coffee-cup crops = forget,
    deep-field crops = retain, prompts from one pool of safe VLGuard instructions), half in the text
    only (VLGuard unsafe instructions = forget, safe ones = retain, images from one pool of cat and
    astronaut crops)."""
    records = json.loads((fixtures_dir / "vlguard" / "train.json").read_text(encoding="utf-8"))
    pairs = [p for r in records if r["safe"] for p in r["instr-resp"]]
    unsafe = [p["unsafe_instruction"] for p in pairs if "unsafe_instruction" in p]
    safe = [p["safe_instruction"] for p in pairs if "safe_instruction" in p]
    neutral = safe[500:500 + 2 * N]
    forget_img, retain_img = _crops("coffee.png", N, 1), _crops("hubble_deep_field.jpg", N, 2)
    shared = _crops("chelsea.png", N, 3) + _crops("astronaut.png", N, 4)
    ex = []
    for i in range(N):
        ex += [dict(example_id=f"img-f{i:03d}", image=forget_img[i], prompt=neutral[2 * i], response="r", role="forget"),
               dict(example_id=f"img-r{i:03d}", image=retain_img[i], prompt=neutral[2 * i + 1], response="r", role="retain"),
               dict(example_id=f"txt-f{i:03d}", image=shared[2 * i], prompt=unsafe[i], response="r", role="forget"),
               dict(example_id=f"txt-r{i:03d}", image=shared[2 * i + 1], prompt=safe[i], response="r", role="retain")]
    return ex


@pytest.fixture(scope="module")
def pressure(two_signal_examples):
    return visual_pressure(two_signal_examples, seed=0)


def test_features_fixed_length_unit_norm():
    photo = (PHOTOS / "astronaut.png").read_bytes()
    f = image_features(photo)
    assert f.shape == (IMAGE_DIM,) and f.dtype == np.float32
    assert np.linalg.norm(f) == pytest.approx(1.0, abs=1e-5)
    assert not np.any(image_features(None))            # the text-only view has no image
    t = text_features(["What is in the image?", "", "How do I pick a lock?"])
    assert t.shape == (3, TEXT_DIM)
    assert np.linalg.norm(t[0]) == pytest.approx(1.0, abs=1e-5) and not np.any(t[1])
    # a text's features do not depend on the texts embedded with it
    assert np.array_equal(text_features(["How do I pick a lock?"])[0], t[2])


def test_visual_pressure_follows_the_modality_that_carries_the_signal(pressure):
    scores, source = pressure
    assert source == "grad-share:mlp-head(opencv-hsv-hog+wordllama-256)@seed0"
    assert sorted(scores) == sorted([f"img-f{i:03d}" for i in range(N)] + [f"txt-f{i:03d}" for i in range(N)])
    assert all(0.0 <= v <= 1.0 for v in scores.values())
    image_signal = np.array([v for k, v in scores.items() if k.startswith("img")])
    text_signal = np.array([v for k, v in scores.items() if k.startswith("txt")])
    assert image_signal.mean() > 0.7 and text_signal.mean() < 0.35
    # almost every image-signal example outranks almost every text-signal one (AUC)
    auc = (image_signal[:, None] > text_signal[None, :]).mean()
    assert auc > 0.95, auc


def test_visual_pressure_is_order_free_and_seeded(two_signal_examples, pressure):
    shuffled = [two_signal_examples[i] for i in np.random.default_rng(7).permutation(len(two_signal_examples))]
    assert visual_pressure(shuffled, seed=0) == pressure          # bit for bit, any input order
    other, source = visual_pressure(two_signal_examples, seed=1)
    assert source.endswith("@seed1") and other != pressure[0]


def test_visual_pressure_bad_records(two_signal_examples):
    broken = [dict(ex) for ex in two_signal_examples[:8]]
    broken[2]["image"] = b"\x89PNG\r\n\x1a\n not really"
    with pytest.raises(RecordError) as err:
        visual_pressure(broken)
    assert err.value.locator.endswith("example_id=" + broken[2]["example_id"])
    dup = [dict(ex) for ex in two_signal_examples[:8]]
    dup[5]["example_id"] = dup[1]["example_id"]
    with pytest.raises(RecordError, match="duplicate"):
        visual_pressure(dup)
    bad_role = [dict(ex) for ex in two_signal_examples[:8]]
    bad_role[0]["role"] = "test"
    with pytest.raises(RecordError, match="role"):
        visual_pressure(bad_role)
    with pytest.raises(SourceError, match="both forget and retain"):
        visual_pressure([ex for ex in two_signal_examples if ex["role"] == "forget"][:4])


def test_read_scores_formats(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps({"a": 0.25, "b": 1, "c": 0}))
    (tmp_path / "s.jsonl").write_text('{"example_id": "a", "score": 0.25}\n\n{"example_id": "b", "score": "1"}\n')
    (tmp_path / "s.csv").write_text("score,example_id,model\n0.25,a,llava\n1.0,b,llava\n")
    assert read_scores(str(tmp_path / "s.json")) == {"a": 0.25, "b": 1.0, "c": 0.0}
    assert read_scores(str(tmp_path / "s.jsonl")) == {"a": 0.25, "b": 1.0}
    assert read_scores(f"file://{tmp_path / 's.csv'}") == {"a": 0.25, "b": 1.0}


@pytest.mark.parametrize("name, text, locator, reason", [
    ("s.jsonl", '{"example_id": "a", "score": 0.5}\n{"example_id": "b", "score": "high"}\n', "s.jsonl:2", "not a number"),
    ("s.jsonl", '{"example_id": "a", "score": 0.5}\n{"example_id": "a", "score": 0.1}\n', "s.jsonl:2", "twice"),
    ("s.jsonl", '{"example_id": "a", "score": 0.5}\n{"example_id": "b"}\n', "s.jsonl:2", "example_id and score"),
    ("s.jsonl", '{"example_id": "a", "score": 0.5}\n{oops\n', "s.jsonl:2", "not JSON"),
    ("s.csv", "example_id,score\na,0.5\nb,NaN\n", "s.csv:3", "finite number in [0, 1]"),
    ("s.csv", "example_id,score\na,0.5\nb,1.5\n", "s.csv:3", "finite number in [0, 1]"),
    ("s.csv", "id,score\na,0.5\n", "s.csv:1", "header"),
    ("s.json", '{"a": 0.5, "b": true}', "s.json#b", "not a number"),
    ("s.json", '[{"a": 0.5}]', "s.json", "one JSON object"),
])
def test_read_scores_bad_values_name_file_and_line(tmp_path, name, text, locator, reason):
    (tmp_path / name).write_text(text)
    with pytest.raises(RecordError) as err:
        read_scores(str(tmp_path / name))
    assert err.value.locator == f"{tmp_path / locator}" and reason in err.value.reason


def test_read_scores_unusable_files(tmp_path):
    with pytest.raises(SourceError, match="cannot read"):
        read_scores(str(tmp_path / "missing.json"))
    (tmp_path / "s.txt").write_text("a 0.5\n")
    with pytest.raises(SourceError, match=".json, .jsonl or .csv"):
        read_scores(str(tmp_path / "s.txt"))
    (tmp_path / "e.jsonl").write_text("\n")
    with pytest.raises(SourceError, match="no scores"):
        read_scores(str(tmp_path / "e.jsonl"))


def test_route_sends_the_top_fraction_to_text_only():
    scores = {"e": 0.9, "a": 0.5, "c": 0.5, "b": 0.1, "d": 0.7, "f": 0.5, "g": 0.2, "h": 0.3}
    text_only, multimodal = route(scores, 0.5)
    # top 4 of 8: e, d, then the three tied at 0.5 broken by example_id (a before c before f)
    assert text_only == ["a", "c", "d", "e"] and multimodal == ["b", "f", "g", "h"]
    assert route(dict(reversed(list(scores.items()))), 0.5) == (text_only, multimodal)
    assert route(scores, 0.0) == ([], sorted(scores)) and route(scores, 1.0) == (sorted(scores), [])
    assert [route_size(10, g) for g in (0.25, 0.5, 0.75)] == [3, 5, 8]      # 2.5 and 7.5 round half up
    assert [route_size(8, g) for g in (0.25, 0.5, 0.75)] == [2, 4, 6]
    with pytest.raises(ValueError):
        route(scores, 1.5)


def test_random_route_same_size_seeded_and_order_free():
    ids = [f"ex{i:03d}" for i in range(200)]
    text_only, multimodal = random_route(ids, 50, seed=0)
    assert len(text_only) == 50 and len(multimodal) == 150 and sorted(text_only + multimodal) == ids
    assert random_route(list(reversed(ids)), 50, seed=0) == (text_only, multimodal)
    assert random_route(ids, 50, seed=1)[0] != text_only
    # a random choice, not the first or last ids: about a quarter of each half of the id range
    assert 15 <= sum(1 for e in text_only if e < "ex100") <= 35
    # nested across sizes for one seed (the same hash order), so g0.25 is inside g0.5
    assert set(random_route(ids, 25, seed=0)[0]) <= set(text_only)
    with pytest.raises(ValueError):
        random_route(ids, 201, seed=0)
