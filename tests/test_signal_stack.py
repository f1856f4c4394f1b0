"""The alternate signal stack survives OpenVINO (lasagna.common.signal_stack): its CPU plugin
swaps the compiling thread's stack and frees it with the model, so two encoders dropped in
the order they were made left the thread on freed memory and the next signal handled there
(^C, the stall watchdog's wake-up) killed the process with SIGSEGV."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

from lasagna.common.signal_stack import _sigaltstack, _Stack, current_stack, signal_stack_kept

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sigaltstack")


def test_the_threads_own_stack_is_back_after_the_block():
    before = current_stack()
    other = ctypes.create_string_buffer(64 * 1024)
    with signal_stack_kept():  # what OpenVINO's compile does: a stack of its own
        assert (
            _sigaltstack()(ctypes.byref(_Stack(ctypes.addressof(other), 0, 64 * 1024)), None) == 0
        )
        assert current_stack()[0] == ctypes.addressof(other)
    assert current_stack() == before


TWO_ENCODERS = """
import gc, os, signal
from lasagna.models.embedders import PACKAGED_EMBEDDER, encode, load_embedder
got = []
signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
first = load_embedder(PACKAGED_EMBEDDER, backend="openvino", precision="fp32")
second = load_embedder(PACKAGED_EMBEDDER, backend="openvino", precision="fp32")
encode(first, ["a"]); encode(second, ["b"])
del first; gc.collect()
del second; gc.collect()
os.kill(os.getpid(), signal.SIGUSR1)
print("handled", len(got))
"""


@pytest.mark.slow
def test_a_signal_after_two_openvino_encoders_is_handled_not_fatal(tmp_path):
    pytest.importorskip("openvino")
    env = dict(os.environ, LASAGNA_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-c", TWO_ENCODERS], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])  # was -11 (SIGSEGV)
    assert "handled 1" in proc.stdout
