"""torch in a fresh process: benchwright/torch_determinism.py's deterministic-algorithms flag set without importing
torch's compiler, and a forked child that trains after its parent ran torch on two threads.

On the installed torch (2.13.0, whose use_deterministic_algorithms it fingerprints) the flag is set without
torch._inductor, and it is enforced: an operation with no deterministic implementation raises, and runs again
once the flag is off. On another torch, or another source, the upstream function is called (a log line says
so). The routing head's context restores the caller's setting.

The build trains the VLM card's baselines in a forked child of the process that fitted the routing head. A
forked child has none of OpenMP's threads: a torch operation on more than one thread there waits for ever (it
was killed as stuck and redone in the parent). Every torch computation of the head runs single-threaded, so
the child trains. (A fresh interpreter: OpenMP's threads started in pytest's own process would stay for the
other tests; the compiler must not be imported before the probe's first phase.)
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# One fresh process (torch's compiler not imported yet): the flag set on the installed torch, then, its source
# judged changed, through the upstream function (which imports the compiler): a JSON line each; a line
# "@@changed" on stderr parts what each phase logged. Then, as a build does (the baselines' imports bring the
# compiler in anyway), with the installed torch judged again: torch run on two threads, the routing head
# fitted, the baselines trained in a forked child (a JSON line: whether it ran in another process, its steps,
# its answers).
PROBE = r"""
import json, logging, os, sys
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
import torch
from benchwright import torch_determinism

def put():
    try:
        torch.zeros(3).put_(torch.tensor([0]), torch.tensor([1.0]))
        return "ran"
    except RuntimeError as err:
        return "raised" if "does not have a deterministic implementation" in str(err) else str(err)

def phase():
    torch_determinism.set_deterministic(True)
    on = {"enabled": torch.are_deterministic_algorithms_enabled(), "put_": put(),
          "compiler": "torch._inductor.config" in sys.modules}
    torch_determinism.set_deterministic(True, warn_only=True)
    warned = {"warn_only": torch.is_deterministic_algorithms_warn_only_enabled()}
    torch_determinism.set_deterministic(False)
    off = {"enabled": torch.are_deterministic_algorithms_enabled(), "put_": put()}
    print(json.dumps({"on": on, "warned": warned, "off": off}), flush=True)

phase()
print("@@changed", file=sys.stderr, flush=True)
installed = torch_determinism.UPSTREAM
torch_determinism.UPSTREAM = "0" * 16
torch_determinism._judged.clear()  # judged again, as in a process that never judged the installed one
phase()
torch_determinism.UPSTREAM = installed
torch_determinism._judged.clear()
print("@@forked", file=sys.stderr, flush=True)

import numpy as np
from benchwright import forked
forked.STUCK_AFTER_S, forked.POLL_S = 20.0, 1.0
torch.set_num_threads(2)
(torch.ones(1 << 21) * 2).sum()  # a torch operation on two threads: OpenMP's threads start in this process
from benchwright.baselines.vlm_unlearning import Inputs, respond, unlearn
from benchwright.vlm_unlearning.routing import fit_head
rng = np.random.default_rng(0)
x_img, x_txt = rng.random((1024, 452), dtype=np.float32), rng.random((1024, 256), dtype=np.float32)
rows = Inputs([f"e{i:04d}" for i in range(1024)], ["forget"] * 1024, x_img, x_txt)
head = fit_head(x_img, x_txt, np.arange(1024) % 2 == 0, steps=3)
def train():
    model, steps = unlearn(head, rows, rows, "gradient_difference", max_steps=3, target=None)
    return os.getpid(), steps, len(respond(model, rows))
pid, steps, answered = forked.ForkedCall(train).result()
print(json.dumps({"other_process": pid != os.getpid(), "steps": steps, "answered": answered}), flush=True)
"""


@pytest.fixture(scope="module")
def probed() -> dict[str, tuple[dict, str]]:
    """{"forked" | "installed" | "changed": (what the phase saw, what it logged)}."""
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    installed, changed, forked = (json.loads(line) for line in done.stdout.strip().splitlines()[-3:])
    before, after = done.stderr.split("@@changed\n")
    after, training = after.split("@@forked\n")
    return {"installed": (installed, before), "changed": (changed, after), "forked": (forked, training)}


def test_the_flag_is_enforced_without_the_compiler_on_the_installed_torch(probed):
    from benchwright import torch_determinism

    assert torch_determinism.refused() is None, "re-check docs/upstream/fixed-costs.md against this torch"
    got, told = probed["installed"]
    assert got == {"on": {"enabled": True, "put_": "raised", "compiler": False}, "warned": {"warn_only": True},
                   "off": {"enabled": False, "put_": "ran"}}
    assert "benchwright.torch_determinism" not in told


def test_another_torch_gets_the_upstream_function_and_a_log_line(probed):
    got, told = probed["changed"]
    assert got["on"] == {"enabled": True, "put_": "raised", "compiler": True} and got["off"]["put_"] == "ran"
    lines = [line for line in told.splitlines() if line.startswith("benchwright.torch_determinism:")]
    assert len(lines) == 1 and "use_deterministic_algorithms differs" in lines[0]


@pytest.mark.parametrize("version, digest, named", [("2.14.0", None, "torch 2.14.0 is not 2.13.0"),
                                                    ("2.13.0+cpu", "0" * 16, "differs")])
def test_refused(version, digest, named):
    from benchwright import torch_determinism

    assert named in torch_determinism.refused(version, digest)


def test_the_routing_context_restores_the_callers_setting():
    import torch

    from benchwright.vlm_unlearning.routing import deterministic_torch

    before = torch.are_deterministic_algorithms_enabled()
    try:
        for outside in (False, True):
            torch.use_deterministic_algorithms(outside)
            with deterministic_torch(0):
                assert torch.are_deterministic_algorithms_enabled()
            assert torch.are_deterministic_algorithms_enabled() is outside
    finally:
        torch.use_deterministic_algorithms(before)


def test_a_forked_child_trains_after_torch_ran_on_two_threads_in_its_parent(probed):
    """(Was tests/test_vlm_unlearning_baselines.py's, in a fresh interpreter of its own.)"""
    assert probed["forked"][0] == {"other_process": True, "steps": 3, "answered": 1024}
