"""test_stubs.py — the type stubs (mopt/__init__.pyi) describe the real API:
every public name of mopt.__all__ is declared, every public method of each
class exists in both, and parameter names agree (meson suite 'python').
Read with ast, so no type checker is needed."""
import ast
import inspect
from pathlib import Path

import mopt

STUB = Path(mopt.__file__).resolve().parent / "__init__.pyi"


def stub_tree():
    return ast.parse(STUB.read_text(), str(STUB))


def declared(tree):
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = node
    return names


def test_package_ships_the_marker_and_stub():
    assert (STUB.parent / "py.typed").is_file()
    assert STUB.is_file()


def test_every_public_name_is_declared():
    names = declared(stub_tree())
    missing = [n for n in mopt.__all__ if n not in names]
    assert not missing, "not in __init__.pyi: %s" % missing


def test_methods_and_parameters_agree():
    names = declared(stub_tree())
    problems = []
    for name in mopt.__all__:
        obj = getattr(mopt, name)
        node = names.get(name)
        if not (inspect.isclass(obj) and isinstance(node, ast.ClassDef)):
            continue
        if issubclass(obj, BaseException) or issubclass(obj, tuple):
            continue
        stub_methods = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
        real = {m for m, v in vars(obj).items()
                if callable(v) or isinstance(v, (staticmethod, property))}
        public = {m for m in real if not m.startswith("_")}
        for m in sorted(public - set(stub_methods)):
            problems.append("%s.%s is not in the stub" % (name, m))
        for m, fn in stub_methods.items():
            if m.startswith("__") and m != "__init__":
                continue
            if not hasattr(obj, m):
                problems.append("stub declares %s.%s, which does not exist" % (name, m))
                continue
            target = inspect.getattr_static(obj, m)
            if isinstance(target, property):
                continue
            func = target.__func__ if isinstance(target, staticmethod) else target
            real_params = [p for p in inspect.signature(func).parameters]
            stub_params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
            if fn.args.vararg:
                stub_params.append(fn.args.vararg.arg)
            stub_params += [a.arg for a in fn.args.kwonlyargs]
            if fn.args.kwarg:
                stub_params.append(fn.args.kwarg.arg)
            if real_params != stub_params:
                problems.append("%s.%s: parameters %s, stub says %s"
                                % (name, m, real_params, stub_params))
    assert not problems, "\n".join(problems)
