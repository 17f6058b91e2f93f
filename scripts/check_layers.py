#!/usr/bin/env python3
"""check_layers.py - the source tree's shape, checked: layers, cycles, the public API.

    scripts/check_layers.py [--objects DIR]

Rules (README, "Source layout"):
  1. Layers, lowest first: core; db; sql; llm; agent; eval; the front ends
     (cli, server, mcp) and askdb-exec (exec: not a front end, it runs the
     db layer's drivers for libaskdb). A file includes headers of its own layer or lower
     ones, never of a higher one. llm and sql do not include each other.
  2. A front end includes nothing of the library but "askdb.h" (and the
     front ends' own headers and system headers: they are all parts of the
     one askdb command); the Makefile also compiles them with include/
     alone on the include path. The library includes no front end.
  3. No include cycle between modules (a module is a .c/.h pair, named by
     its path without the ending): m -> n when m.c or m.h includes n.h.
  4. With --objects DIR (the release objects, build/), no cycle between
     object files either: a.o -> b.o when a.o uses a symbol b.o defines.
     This catches a header that declares functions of several .c files.

Prints every violation and exits 1 when there is one, else prints a
one-line summary and exits 0.
"""
import os
import re
import subprocess
import sys

LAYERS = {"core": 0, "db": 1, "sql": 2, "llm": 2, "agent": 3, "eval": 4,
          "cli": 5, "server": 5, "mcp": 5, "exec": 5}
FRONT_ENDS = {"cli", "server", "mcp"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    out = []
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def layer_of(path):
    parts = path.split(os.sep)
    if parts[0] == "include":
        return "api"
    return parts[1] if len(parts) > 2 else None


def resolve(root, src, inc):
    """The repository path an #include "inc" in src names, or None."""
    for base in (os.path.dirname(src), "src", "include"):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(os.path.join(root, p)):
            return p
    return None


def sccs(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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


def check_includes(root, errors):
    graph = {}
    nedges = 0
    for src in sources(root):
        text = open(os.path.join(root, src), encoding="utf-8",
                    errors="replace").read()
        lay = layer_of(src)
        mod = os.path.splitext(src)[0]
        for inc in INCLUDE_RE.findall(text):
            target = resolve(root, src, inc)
            where = "%s: #include \"%s\"" % (src, inc)
            if target is None:
                errors.append(where + ": no such header in the tree")
                continue
            tlay = layer_of(target)
            if lay in FRONT_ENDS:
                if tlay != "api" and tlay not in FRONT_ENDS:
                    errors.append(where + ": a front end includes only "
                                  "askdb.h and the front ends' headers")
                    continue
                if tlay in FRONT_ENDS:
                    tmod = os.path.splitext(target)[0]
                    if tmod != mod:
                        graph.setdefault(mod, set()).add(tmod)
                        nedges += 1
                continue
            if tlay in FRONT_ENDS:
                errors.append(where + ": the library includes a front end")
                continue
            if tlay == "api":
                continue
            if lay not in LAYERS or tlay not in LAYERS:
                errors.append(where + ": file outside the known layers")
                continue
            if LAYERS[tlay] > LAYERS[lay] or \
                    (LAYERS[tlay] == LAYERS[lay] and tlay != lay):
                errors.append(where + ": layer %s includes layer %s "
                              "(lowest first: core, db, sql|llm, agent, "
                              "eval, front ends)" % (lay, tlay))
            tmod = os.path.splitext(target)[0]
            if tmod != mod:
                graph.setdefault(mod, set()).add(tmod)
                nedges += 1
    for comp in sccs(graph):
        errors.append("include cycle between modules: " + " <-> ".join(comp))
    return len(graph), nedges


def nm_symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj],
                         capture_output=True, text=True, check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) >= 3}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True,
                         check=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.split()}
    return defined, used


def check_objects(objdir, errors):
    objs = []
    for d, _, files in os.walk(os.path.join(objdir, "src")):
        for f in files:
            if f.endswith(".o"):
                objs.append(os.path.join(d, f))
    owner, uses = {}, {}
    for o in sorted(objs):
        name = os.path.relpath(o, objdir)
        defined, used = nm_symbols(o)
        for s in defined:
            owner[s] = name
        uses[name] = used
    graph = {}
    for name, used in uses.items():
        for s in used:
            if s in owner and owner[s] != name:
                graph.setdefault(name, set()).add(owner[s])
    for comp in sccs(graph):
        errors.append("objects need each other's symbols: " +
                      " <-> ".join(comp))
    return len(objs)


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = []
    nmods, nedges = check_includes(root, errors)
    nobjs = None
    if len(argv) == 3 and argv[1] == "--objects":
        nobjs = check_objects(argv[2], errors)
    elif len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for e in errors:
        print("check_layers: " + e, file=sys.stderr)
    if errors:
        return 1
    print("check_layers: %d modules, %d includes, no cycle, no upward "
          "include%s" % (nmods, nedges, ", %d objects without a cycle" % nobjs
                         if nobjs is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
