"""conftest.py — makes the in-tree `mopt` package importable and insists on a library.

The tests never skip: if libmopt cannot be found the whole run fails with the
reason (set MOPT_LIBRARY, or build first: meson setup build && ninja -C build).
"""
import sys
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PKG_ROOT = HERE.parent                 # bindings/python
REPO = PKG_ROOT.parent.parent          # the source tree
sys.path.insert(0, str(PKG_ROOT))

try:
    import mopt  # noqa: F401
except ImportError as e:  # LibraryNotFoundError is an ImportError
    raise pytest.UsageError(
        "the mopt binding cannot load libmopt, so its tests cannot run: %s\n"
        "Build the library first (meson setup build && ninja -C build) or set MOPT_LIBRARY "
        "to the path of libmopt.so." % e) from e


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture
def on_threads():
    """on_threads(target, args_list): target(*args) on a thread of its own for
    each args of the list, all started, then all joined."""
    def run(target, args_list):
        threads = [threading.Thread(target=target, args=args) for args in args_list]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return run


@pytest.fixture
def wrapped_buffers(monkeypatch):
    """The data addresses the binding hands to mopt_tensor_wrap, in order
    (the real function still runs)."""
    from mopt import core
    seen = []
    real = core._lib.mopt_tensor_wrap

    def spy(dtype, rank, dims, data, size, out):
        seen.append(data.value)
        return real(dtype, rank, dims, data, size, out)

    monkeypatch.setattr(core._lib, "mopt_tensor_wrap", spy)
    return seen
