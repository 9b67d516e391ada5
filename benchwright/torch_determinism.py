"""torch's deterministic-algorithms flag, set without importing torch's compiler: a guarded shortcut.

``torch.use_deterministic_algorithms(mode)`` (torch 2.13.0) does two things: it imports
``torch._inductor.config`` to set its ``deterministic`` option (822 modules, about 1-2.7 CPU-s, the
first time in a process), then sets the flag every operation checks (``torch._C._set_deterministic_algorithms``).
Inductor is torch's compiler: nothing here compiles (no ``torch.compile``), so ``set_deterministic``
sets the flag alone, and the compiler's option too when something imported it already. A compiler imported
afterwards reads its own default (``TORCHINDUCTOR_DETERMINISTIC``): a caller that compiles must call
``torch.use_deterministic_algorithms`` itself.

The shortcut is taken only on the torch it was written against: ``TORCH_VERSION`` and the sha256 of
``use_deterministic_algorithms``' source (``UPSTREAM``); on any other torch the upstream function is called,
and a log line says so once (tests/test_torch_determinism.py; docs/upstream/fixed-costs.md).
"""
from __future__ import annotations

import hashlib
import inspect
import logging
import sys

import torch

log = logging.getLogger(__name__)

TORCH_VERSION = "2.13.0"  # the release whose use_deterministic_algorithms this module reproduces
UPSTREAM = "ad37085c8a5c2208"  # sha256 (first 16 hex digits) of its source there

_judged: list[str | None] = []  # why the shortcut does not apply (None: it does), once judged


def fingerprint() -> str:
    return hashlib.sha256(inspect.getsource(torch.use_deterministic_algorithms).encode()).hexdigest()[:16]


def refused(version: str | None = None, digest: str | None = None) -> str | None:
    """Why the shortcut does not apply to the installed torch (``version``, ``digest``: what to judge
    instead, for the tests), or None when it does."""
    version = torch.__version__ if version is None else version
    if version.split("+")[0] != TORCH_VERSION:
        return f"torch {version} is not {TORCH_VERSION}, which benchwright.torch_determinism was written against"
    if (fingerprint() if digest is None else digest) != UPSTREAM:
        return f"torch {version}'s use_deterministic_algorithms differs from the one benchwright.torch_determinism reproduces"
    return None


def set_deterministic(mode: bool, warn_only: bool = False) -> None:
    """``torch.use_deterministic_algorithms(mode, warn_only=warn_only)`` without importing the compiler
    (on torch 2.13.0; elsewhere that function itself)."""
    if not _judged:
        _judged.append(refused())
        if _judged[0] is not None:
            log.info("%s: torch.use_deterministic_algorithms is called (it imports torch._inductor)", _judged[0])
    if _judged[0] is not None:
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
        return
    compiler = sys.modules.get("torch._inductor.config")
    if compiler is not None:  # imported by someone else: its option follows, as upstream sets it
        compiler.deterministic = mode
    torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)
