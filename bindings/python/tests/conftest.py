"""conftest.py — makes the in-tree `mopt` package importable and insists on a library.

The tests never skip: if libmopt cannot be found the whole run fails with the
reason (set MOPT_LIBRARY, or build first: meson setup build && ninja -C build).
"""
import sys
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
