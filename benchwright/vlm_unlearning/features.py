"""Fixed input features for the small CPU multimodal head (routing scores and the unlearning baselines).

A VLM is not run here; the head stands in for one and sees two fixed feature blocks per example:

* **image** (``IMAGE_DIM`` = 452): the encoded image decoded by OpenCV, resized to 64x64 (``INTER_AREA``),
  then an HSV colour histogram (OpenCV ``calcHist``, 8 hue x 4 saturation x 4 value bins = 128) and a
  HOG descriptor of the grey image (scikit-image ``hog``: 9 orientations, 16x16-pixel cells, 2x2-cell
  blocks = 324). Each part is L2-normalised and the two are scaled by 1/sqrt(2), so the block has unit
  norm. These are colour and edge-orientation statistics: they do not read text. The typographic
  image-only view carries the instruction as pixels, and these features see it only as "dark glyph
  strokes on a white canvas" (the HOG of monospace text), not as words; a head over them cannot
  understand a typographic instruction the way a VLM's vision tower can.
* **text** (``TEXT_DIM`` = 256): the prompt's sentence embedding from ``wordllama`` (its 256-dim
  model ships inside the PyPI wheel; loaded from the package folder with downloads disabled),
  L2-normalised. Each text is embedded on its own, so a text's features do not depend on which other
  texts were embedded with it (wordllama pads a batch to its longest text, and summing a different
  number of padded zeros can change the last bit).

A missing image (the text-only view) is an all-zero image block; an empty prompt is an all-zero text
block (wordllama's normalised embedding of an empty text is NaN).

Both are pure functions of their input, so each process keeps the features it computed lately
(``FEATURE_CACHE_SIZE`` images by their bytes' sha256, as many texts): an image or a prompt met again
(a safe image's two examples, one prompt asked of many images, the routing step's features read again
by the card's baselines in the same build) is not decoded or embedded again. A cached block is
read-only; the arrays returned are the same values bit for bit either way.
"""
from __future__ import annotations

import collections
import functools
import hashlib
import threading
from pathlib import Path

import cv2
import numpy as np
from skimage.feature import hog

from benchwright.errors import RecordError

__all__ = ["IMAGE_SIZE", "HSV_BINS", "IMAGE_DIM", "TEXT_DIM", "FEATURE_SOURCE",
           "image_features", "text_features", "text_encoder"]

IMAGE_SIZE = 64
HSV_BINS = (8, 4, 4)
HOG_PARAMS = {"orientations": 9, "pixels_per_cell": (16, 16), "cells_per_block": (2, 2)}
HOG_DIM = 324   # 3x3 blocks x 2x2 cells x 9 orientations on a 64x64 image
IMAGE_DIM = int(np.prod(HSV_BINS)) + HOG_DIM
TEXT_DIM = 256
# names the features in routing_score_source
FEATURE_SOURCE = "opencv-hsv-hog+wordllama-256"
# features kept per process, of images and of texts each: 8,192 x (452 or 256) float32, at most 15 MB
FEATURE_CACHE_SIZE = 8192


class _Recent:
    """The last ``size`` values computed by key (least recently used dropped first); thread-safe."""

    def __init__(self, size: int):
        self.size, self._values, self._lock = size, collections.OrderedDict(), threading.Lock()

    def get(self, key, compute):
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = compute()
        value.flags.writeable = False  # shared by every caller that asks again
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


_IMAGES, _TEXTS = _Recent(FEATURE_CACHE_SIZE), _Recent(FEATURE_CACHE_SIZE)


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def _check_encoded(data, locator: str) -> None:
    if not isinstance(data, (bytes, bytearray, memoryview)) or len(data) == 0:
        raise RecordError(locator, "image: no encoded image bytes")


def decode_image(data: bytes, locator: str) -> np.ndarray:
    """BGR uint8 array from encoded image bytes (PNG, JPEG, ...); ``RecordError`` if it does not decode."""
    _check_encoded(data, locator)
    img = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise RecordError(locator, "image: the bytes are not an image OpenCV can decode")
    return img


def image_features(data: bytes | None, locator: str = "image") -> np.ndarray:
    """The image block (``IMAGE_DIM`` float32, unit norm, read-only); zeros for ``None`` (no image)."""
    if data is None:
        return np.zeros(IMAGE_DIM, dtype=np.float32)
    _check_encoded(data, locator)
    return _IMAGES.get(hashlib.sha256(data).digest(), lambda: _image_block(data, locator))


def _image_block(data: bytes, locator: str) -> np.ndarray:
    bgr = cv2.resize(decode_image(data, locator), (IMAGE_SIZE, IMAGE_SIZE), interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)
    # OpenCV's 8-bit hue runs 0..179
    hist = cv2.calcHist([hsv], [0, 1, 2], None, list(HSV_BINS), [0, 180, 0, 256, 0, 256]).ravel()
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY).astype(np.float64) / 255.0
    edges = hog(grey, feature_vector=True, **HOG_PARAMS)
    out = np.concatenate([_unit(hist.astype(np.float64)), _unit(edges)]) / np.sqrt(2.0)
    return out.astype(np.float32)


@functools.lru_cache(maxsize=1)
def text_encoder():
    """wordllama's packaged 256-dim model, loaded from the wheel's own folder (no download)."""
    import wordllama
    from wordllama import WordLlama
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True, dim=TEXT_DIM)


def text_features(texts: list[str]) -> np.ndarray:
    """(len(texts), ``TEXT_DIM``) float32, each row unit norm (zeros for an empty text)."""
    out = np.zeros((len(texts), TEXT_DIM), dtype=np.float32)
    for i, text in enumerate(texts):
        if text and text.strip():
            out[i] = _TEXTS.get(text, lambda text=text: _text_block(text))
    return out


def _text_block(text: str) -> np.ndarray:
    return _unit(text_encoder().embed([text], norm=False)[0].astype(np.float64)).astype(np.float32)
