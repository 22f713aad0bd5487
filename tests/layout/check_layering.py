#!/usr/bin/env python3
"""check_layering.py — the layering of lib/ and kernels/, checked over the #include graph.

The layers, top to bottom (DESIGN.md):

    api  ->  {runtime, io}  ->  passes  ->  ops  ->  {kernels, ir}  ->  core

A folder is lib/<name>/ (api, runtime, io, passes, ops, ir, core) or kernels/
as a whole (kernels/ref, cpu, onednn, openblas and kernels/*.h). A file may
#include a header of its own folder or of any folder below its own, and
nothing else. Precisely, folder -> folders it may include besides itself:

    api      runtime io passes ops kernels ir core
    runtime  passes ops kernels ir core
    io       passes ops kernels ir core
    passes   ops kernels ir core
    ops      kernels ir core
    kernels  core
    ir       core
    core     (nothing)

Peers do not include each other: runtime and io are independent, and so are
kernels and ir (kernels see pointers, shapes and small parameter structs,
never the IR). <mopt/mopt.h> (the public header), system headers and the
generated "mopt_config.h" may be included by anyone.

Rules checked, each reported with the offending file and line:
1. no upward or sideways include (an edge not in the table above);
2. no cycle between folders (any cycle is printed with the includes that
   form it; with rule 1 satisfied none can exist, so this is a second
   opinion, not a second rule to satisfy);
3. every C file of lib/, kernels/, tests/, bench/, tools/ that tests a
   MOPT_HAVE_* macro includes "mopt_config.h" itself: without it #ifdef
   silently reads "not built" and a backend disappears.

Known violations are listed in an allow-list (tests/layout/layering_allow.txt):
one include a line, "from/file.c -> to/file.h  # why, and who removes it".
They are printed but do not fail. The list may only shrink: an entry
without a comment, or one that no longer matches an include in the code,
fails the check (delete the line), as does any violation not listed.

usage: check_layering.py SOURCE_ROOT ALLOW_LIST
Stdlib only. Exit 0 when clean, 1 with violations (one per line on stderr).
"""
import os
import re
import sys

ORDER = {
    "api": {"runtime", "io", "passes", "ops", "kernels", "ir", "core"},
    "runtime": {"passes", "ops", "kernels", "ir", "core"},
    "io": {"passes", "ops", "kernels", "ir", "core"},
    "passes": {"ops", "kernels", "ir", "core"},
    "ops": {"kernels", "ir", "core"},
    "kernels": {"core"},
    "ir": {"core"},
    "core": set(),
}
# Where "#include "x/y.h"" is looked up, as meson's include_directories:
# the including file's folder first, then these (relative to the root).
INCLUDE_DIRS = ["lib", "."]
FREE_INCLUDES = {"mopt_config.h"}
CONFIG_SCAN = ["lib", "kernels", "tests", "bench", "tools"]

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def strip_comments(text):
    # keep newlines so line numbers stay right
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def c_files(root, top):
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(dirpath, name), root)


def folder_of(rel):
    parts = rel.split(os.sep)
    if parts[0] == "kernels":
        return "kernels"
    if parts[0] == "lib" and len(parts) >= 3 and parts[1] in ORDER:
        return parts[1]
    return None


def resolve(root, including, target):
    """The including file's folder first, then INCLUDE_DIRS; None if not ours."""
    candidates = [os.path.join(os.path.dirname(including), target)]
    candidates += [os.path.join(d, target) for d in INCLUDE_DIRS]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def read_allow(path):
    entries, errors = {}, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            body, _, comment = line.partition("#")
            body = body.strip()
            if not body:
                continue
            m = re.fullmatch(r"(\S+)\s*->\s*(\S+)", body)
            if not m:
                errors.append("%s:%d: not 'from -> to  # why': %s" % (path, n, line.rstrip()))
                continue
            if not comment.strip():
                errors.append("%s:%d: %s has no comment saying why it is allowed"
                              % (path, n, body))
            edge = (m.group(1), m.group(2))
            if edge in entries:
                errors.append("%s:%d: %s -> %s listed twice" % (path, n, *edge))
            entries[edge] = n
    return entries, errors


def find_cycles(edges):
    """Folder-level cycles (strongly connected components of size > 1)."""
    graph = {}
    for a, b in edges:
        if a != b:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    if len(argv) != 3:
        raise SystemExit(__doc__)
    root, allow_path = argv[1], argv[2]
    allow, errors = read_allow(allow_path)
    seen_allowed = set()
    known = []
    folder_edges = {}  # (folder, folder) -> [(file, line, target)]
    n_files = n_includes = 0
    for top in ("lib", "kernels"):
        for rel in c_files(root, top):
            src = folder_of(rel)
            if src is None:
                continue
            n_files += 1
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = strip_comments(f.read())
            for m in INCLUDE_RE.finditer(text):
                target = m.group(1)
                if target in FREE_INCLUDES:
                    continue
                line = text.count("\n", 0, m.start()) + 1
                dest_file = resolve(root, rel, target)
                if dest_file is None:
                    errors.append("%s:%d: #include \"%s\" is not found under %s"
                                  % (rel, line, target, " or ".join([os.path.dirname(rel)]
                                                                     + INCLUDE_DIRS)))
                    continue
                dst = folder_of(dest_file)
                if dst is None:
                    errors.append("%s:%d: #include \"%s\" reaches %s, outside the layered "
                                  "folders" % (rel, line, target, dest_file))
                    continue
                n_includes += 1
                folder_edges.setdefault((src, dst), []).append((rel, line, dest_file))
                if dst == src or dst in ORDER[src]:
                    continue
                edge = (rel, dest_file)
                what = "%s:%d: %s includes %s (%s -> %s is %s)" % (
                    rel, line, src, dest_file, src, dst,
                    "upward" if src in ORDER[dst] else "sideways, between peers")
                if edge in allow:
                    seen_allowed.add(edge)
                    known.append(what)
                else:
                    errors.append(what + "; not in " + os.path.basename(allow_path))
    for edge, n in sorted(allow.items(), key=lambda e: e[1]):
        if edge not in seen_allowed:
            errors.append("%s:%d: %s -> %s no longer violates the layering (or no longer "
                          "exists): delete this line" % (allow_path, n, *edge))

    cycles = find_cycles(folder_edges)
    for comp in cycles:
        lines = ["folder cycle between %s; the includes that form it:" % ", ".join(comp)]
        listed_only = True
        for (a, b), sites in sorted(folder_edges.items()):
            if a in comp and b in comp and a != b and not (b in ORDER[a]):
                for rel, line, dest in sites:
                    lines.append("    %s:%d -> %s" % (rel, line, dest))
                    listed_only &= (rel, dest) in allow
        if listed_only:
            known.append("\n".join(lines))
        else:
            errors.append("\n".join(lines))

    # Rule 3: MOPT_HAVE_* users include the generated config header.
    for top in CONFIG_SCAN:
        if not os.path.isdir(os.path.join(root, top)):
            continue
        for rel in c_files(root, top):
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = strip_comments(f.read())
            m = re.search(r"\bMOPT_HAVE_\w+", text)
            if m and not re.search(r'^\s*#\s*include\s*"mopt_config\.h"', text, re.M):
                line = text.count("\n", 0, m.start()) + 1
                errors.append("%s:%d: tests %s but does not #include \"mopt_config.h\" (the "
                              "macro would read as undefined)" % (rel, line, m.group(0)))

    for k in known:
        print("known (allow-listed): " + k)
    for e in errors:
        print("check_layering: " + e, file=sys.stderr)
    if errors:
        print("check_layering: %d problem(s); layering: api -> {runtime, io} -> passes -> ops "
              "-> {kernels, ir} -> core" % len(errors), file=sys.stderr)
        return 1
    print("check_layering: %d files, %d includes between our headers, %d allow-listed "
          "violation(s), nothing else" % (n_files, n_includes, len(seen_allowed)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
