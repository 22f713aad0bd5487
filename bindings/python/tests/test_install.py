"""test_install.py — `meson install`, then `pip install` the wheel, then
`import mopt` works with no MOPT_LIBRARY: the package finds libmopt through
the dynamic loader, through pkg-config, or as a copy bundled into the wheel
(meson suite 'python').

The library is installed with `meson install --destdir` from the build folder
that holds MOPT_LIBRARY (the one meson test passes), and the wheel is
installed with pip into a folder outside the source tree, so the package
cannot find the build folder by walking up from itself.
"""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PKG_ROOT = Path(__file__).resolve().parent.parent

PROGRAM = """
import numpy as np
import mopt
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
sess = mopt.InferenceSession(m.SerializeToString())
(y,) = sess.run(None, {"x": np.array([-1.0, 2.0], np.float32)})
assert y.tolist() == [0.0, 2.0], y
print(mopt.__file__)
print(mopt.library_path)
"""


def build_dir():
    lib = os.environ.get("MOPT_LIBRARY")
    if not lib or not (Path(lib).parent / "meson-private").is_dir():
        pytest.fail("test_install needs MOPT_LIBRARY to point into a meson build folder "
                    "(meson test -C build --suite python sets it); it is %r" % lib)
    return Path(lib).parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(libdir, folder of a relocated mopt.pc) of a meson install into a temp destdir."""
    tmp = tmp_path_factory.mktemp("install")
    dest = tmp / "dest"
    r = subprocess.run(["meson", "install", "-C", str(build_dir()), "--no-rebuild", "--quiet",
                        "--destdir", str(dest)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    sos = sorted(dest.rglob("libmopt.so.0"))
    pcs = sorted(dest.rglob("mopt.pc"))
    assert len(sos) == 1 and len(pcs) == 1, (sos, pcs)
    # The .pc file names the real prefix; point it into the destdir, as a
    # relocated install would be.
    text = pcs[0].read_text()
    prefix = next(line.split("=", 1)[1] for line in text.splitlines()
                  if line.startswith("prefix="))
    pc_dir = tmp / "pkgconfig"
    pc_dir.mkdir()
    (pc_dir / "mopt.pc").write_text(text.replace("prefix=" + prefix,
                                                 "prefix=" + str(dest) + prefix, 1))
    return sos[0].parent, pc_dir


def build_wheel(tmp, bundle=None):
    src = tmp / "src"
    shutil.copytree(PKG_ROOT, src, ignore=shutil.ignore_patterns("__pycache__", "build",
                                                                  "*.egg-info", "*.so*"))
    if bundle is not None:
        shutil.copy(bundle, src / "mopt" / "libmopt.so.0")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "--no-index", "-q", "-w", str(tmp / "dist"), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (wheel,) = (tmp / "dist").glob("mopt-*.whl")
    return wheel


def pip_install(wheel, target):
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                        "--target", str(target), str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def run_program(site, cwd, **env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MOPT_LIBRARY", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    env.update({k: str(v) for k, v in env_extra.items()})
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def plain_site(tmp_path_factory):
    """The wheel (no library inside) pip-installed into a folder outside the tree."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp)
    assert not any("libmopt" in n for n in zipfile.ZipFile(wheel).namelist())
    site = tmp / "site"
    pip_install(wheel, site)
    return site


def test_import_finds_installed_library_through_the_loader(installed, plain_site, tmp_path):
    libdir, _ = installed
    r = run_program(plain_site, tmp_path, LD_LIBRARY_PATH=libdir)
    assert r.returncode == 0, r.stderr
    pkg_file, lib = r.stdout.split()
    assert Path(pkg_file).is_relative_to(plain_site)
    assert Path(lib).resolve() == (libdir / "libmopt.so.0").resolve()


def test_import_finds_installed_library_through_pkg_config(installed, plain_site, tmp_path):
    libdir, pc_dir = installed
    r = run_program(plain_site, tmp_path, PKG_CONFIG_PATH=pc_dir)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.split()[1]).resolve() == (libdir / "libmopt.so.0").resolve()


def test_import_without_any_library_fails_clearly(plain_site, tmp_path):
    r = run_program(plain_site, tmp_path)
    assert r.returncode != 0, ("found a libmopt with no hint given (installed system-wide? "
                               "this test needs a machine without one): " + r.stdout)
    assert "LibraryNotFoundError" in r.stderr and "pkg-config" in r.stderr


def test_wheel_with_bundled_library(installed, tmp_path):
    libdir, _ = installed
    wheel = build_wheel(tmp_path, bundle=(libdir / "libmopt.so.0").resolve())
    assert "mopt/libmopt.so.0" in zipfile.ZipFile(wheel).namelist()
    site = tmp_path / "site"
    pip_install(wheel, site)
    r = run_program(site, tmp_path)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.split()[1]) == site / "mopt" / "libmopt.so.0"
