#!/usr/bin/env python3
"""check_python_env.py — proves that the Python the suites run on is the
project's hermetic virtual environment (meson suite 'python', test
'python_env').

Fails unless: this interpreter is SOURCE/.venv's; no folder of installed
packages outside the venv is on sys.path (no system or user site-packages,
no PYTHONPATH); and the venv holds exactly the packages of requirements.txt
at their pinned versions, plus pip, and nothing else. So a package installed
by hand, in the venv or elsewhere, cannot make a test pass that a fresh
machine would fail.

usage: check_python_env.py SOURCE_ROOT
"""
import importlib.metadata as md
import re
import site
import sys
from pathlib import Path


def canon(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(req_file):
    out = {}
    for line in req_file.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", line)
        if not m:
            raise SystemExit("requirements.txt: '%s' is not an exact pin NAME==VERSION" % line)
        out[canon(m.group(1))] = m.group(2)
    return out


def main():
    root = Path(sys.argv[1]).resolve()
    venv = root / ".venv"
    problems = []
    prefix = Path(sys.prefix).resolve()
    if prefix != venv:
        problems.append("the interpreter is %s (prefix %s), not the project venv %s: run "
                        "scripts/install-deps.sh, then reconfigure (meson setup --reconfigure)"
                        % (sys.executable, prefix, venv))
    if sys.prefix == sys.base_prefix:
        problems.append("not running in a virtual environment")
    if site.ENABLE_USER_SITE:
        problems.append("the user site-packages are enabled")
    for entry in sys.path:
        p = Path(entry or ".").resolve()
        if p.name in ("site-packages", "dist-packages") and venv not in p.parents:
            problems.append("sys.path holds %s, outside the venv" % p)
    want = pins(root / "requirements.txt")
    have = {}
    for dist in md.distributions(path=[p for p in sys.path if p]):
        have.setdefault(canon(dist.metadata["Name"]), dist.version)
    for name, version in sorted(want.items()):
        if name not in have:
            problems.append("%s==%s (requirements.txt) is not installed" % (name, version))
        elif have[name] != version:
            problems.append("%s is %s, requirements.txt pins %s" % (name, have[name], version))
    extra = sorted(set(have) - set(want) - {"pip"})
    if extra:
        problems.append("installed but not in requirements.txt: %s (add them there, or "
                        "pip uninstall them from the venv)" % ", ".join(extra))
    print("python %s at %s; sys.path: %s" % (sys.version.split()[0], sys.executable, sys.path))
    print("%d pinned packages checked, %d installed" % (len(want), len(have)))
    if problems:
        for p in problems:
            print("FAIL:", p)
        return 1
    print("the venv is hermetic and matches requirements.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
