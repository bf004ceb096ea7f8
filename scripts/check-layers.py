#!/usr/bin/env python3
"""The layering of Tributary's code, checked from its includes.

Reads every `#include "..."` and `#include <tributary/...>` of the library (src/, include/,
tasks/) and
  1. checks them against the rules of docs/architecture.md (the table between the markers
     `<!-- layers -->` and `<!-- /layers -->`: each wing, the folders it holds, and the
     wings it may include); an include from a wing into one it may not is an error;
  2. with --figures, prints the include graph's shape per tree (src/, include/): units (a
     header and its source are one unit), the includes between units, those that point back
     up (an include from a unit into one that, through its own includes, reaches the first:
     the edges of a circle of units), and the circles of files (a header that reaches
     itself).
Exits 1 when a rule is broken or a file includes itself in a circle.

  scripts/check-layers.py [--figures] [--root DIR]
"""
import argparse
import os
import re
import sys
from collections import defaultdict

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
TREES = ("src", "include", "tasks")
EXTENSIONS = (".hpp", ".cpp", ".h", ".cpp.in", ".hpp.in")


def project_files(root):
    files = []
    for tree in TREES:
        for dirpath, _, names in os.walk(os.path.join(root, tree)):
            for name in names:
                if name.endswith(EXTENSIONS):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(files)


def include_roots(root):
    # Where an include is looked for: the file's own folder, then these (as the build does).
    return ["include", "tasks/include", "src"]  # config.hpp: its config.hpp.in


def resolve(root, source, written, quoted, known):
    candidates = []
    if quoted:
        candidates.append(os.path.normpath(os.path.join(os.path.dirname(source), written)))
    for base in include_roots(root):
        candidates.append(os.path.normpath(os.path.join(base, written)))
    for c in candidates:
        if c in known:
            return c
        if c.endswith(".hpp") and c + ".in" in known:  # config.hpp, made from config.hpp.in
            return c + ".in"
    return None


def graph(root):
    files = project_files(root)
    known = set(files)
    edges = defaultdict(set)
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for kind, written in INCLUDE.findall(text):
            if kind == "<" and not written.startswith("tributary/"):
                continue
            target = resolve(root, f, written, kind == '"', known)
            if target and target != f:
                edges[f].add(target)
    return files, edges


def read_rules(root):
    path = os.path.join(root, "docs", "architecture.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    m = re.search(r"<!-- layers -->(.*?)<!-- /layers -->", text, re.S)
    if not m:
        sys.exit("check-layers: docs/architecture.md has no table between <!-- layers --> and "
                 "<!-- /layers -->")
    wings = []  # (name, [folders], {allowed})
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("wing", "") or set(cells[0]) <= set("-: "):
            continue
        name = cells[0].strip("`")
        folders = [f.strip().strip("`") for f in cells[1].split(",") if f.strip()]
        allowed = {a.strip().strip("`") for a in cells[2].split(",")
                   if a.strip() and a.strip() not in ("—", "-", "nothing")}
        wings.append((name, folders, allowed))
    return wings


def wing_of(path, wings):
    best, best_len = None, -1
    for name, folders, _ in wings:
        for folder in folders:
            if folder.endswith("/*"):  # the files of the folder itself, not its subfolders
                base = folder[:-2]
                if os.path.dirname(path) == base and len(base) > best_len:
                    best, best_len = name, len(base)
            elif (path == folder or path.startswith(folder.rstrip("/") + "/")) and \
                    len(folder) > best_len:
                best, best_len = name, len(folder)
    return best


def unit_of(path):
    base = os.path.basename(path)
    for ext in EXTENSIONS:
        if base.endswith(ext):
            base = base[: -len(ext)]
            break
    folder = os.path.dirname(path)
    # A header and its implementation are one unit, wherever the header lives
    # (include/tributary/x.hpp, detail/<wing>/x.hpp or src/<wing>/x.hpp with src/<wing>/x.cpp);
    # the task engine (tasks/) is a library of its own, its names apart.
    library = "tasks" if path.startswith("tasks/") else "tributary"
    return (folder.split("/")[0], folder, library + ":" + base)


def sccs(nodes, adj):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def figures(files, edges, tree):
    # A unit is a name: its header (wherever it lives) and its source are one unit, as a
    # reader follows them; the tree's units are those with a file under it.
    by_name = defaultdict(set)
    for f in files:
        by_name[unit_of(f)[2]].add(f)
    if tree == "include":
        # The installed headers as a user's compiler sees them: header to header.
        units = {n: {f for f in fs if f.startswith("include/")} for n, fs in by_name.items()}
        units = {n: fs for n, fs in units.items() if fs}
    else:
        units = {n: fs for n, fs in by_name.items() if any(f.startswith(tree + "/") for f in fs)}
    unit_of_file = {f: n for n, fs in units.items() for f in fs}
    uadj = defaultdict(set)
    for f, targets in edges.items():
        if f not in unit_of_file:
            continue
        for t in targets:
            if t in unit_of_file and unit_of_file[t] != unit_of_file[f]:
                uadj[unit_of_file[f]].add(unit_of_file[t])
    nedges = sum(len(v) for v in uadj.values())
    comps = [c for c in sccs(list(units), uadj) if len(c) > 1]
    back = []
    for comp in comps:
        members = set(comp)
        # Within a circle of units, the includes that point back up: edges into a unit that
        # comes earlier in a walk of the circle (a depth-first order from its first unit).
        order = {}
        def walk(u):
            order[u] = len(order)
            for w in sorted(uadj[u]):
                if w in members and w not in order:
                    walk(w)
        walk(sorted(comp)[0])
        for u in comp:
            for w in uadj[u]:
                if w in members and order[w] <= order[u]:
                    back.append((u, w))
    fadj = {f: {t for t in ts if t.startswith(tree + "/")} for f, ts in edges.items()
            if f.startswith(tree + "/")}
    file_circles = [c for c in sccs([f for f in files if f.startswith(tree + "/")], fadj)
                    if len(c) > 1]
    return len(units), nedges, back, file_circles


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("--no-rules", action="store_true", help="figures only (no table needed)")
    args = ap.parse_args()
    files, edges = graph(args.root)
    problems = []
    if not args.no_rules:
        wings = read_rules(args.root)
        names = {w[0] for w in wings}
        allowed = {w[0]: w[2] for w in wings}
        for name, _, may in wings:
            for a in may:
                if a not in names:
                    problems.append(f"docs/architecture.md: wing '{name}' may include '{a}', "
                                    "which is not a wing")
        for f in files:
            wf = wing_of(f, wings)
            if wf is None:
                problems.append(f"{f}: in no wing of docs/architecture.md")
                continue
            for t in sorted(edges.get(f, ())):
                wt = wing_of(t, wings)
                if wt is not None and wt != wf and wt not in allowed[wf]:
                    problems.append(f"{f} includes {t}: wing '{wf}' may not include '{wt}'")
    for tree in ("src", "include"):
        units, nedges, back, circles = figures(files, edges, tree)
        for c in circles:
            problems.append(f"{tree}/: a circle of includes: {' -> '.join(sorted(c))}")
        if args.figures:
            print(f"check-layers: {tree}/: {units} units, {nedges} includes between units, "
                  f"{len(back)} pointing back up, {len(circles)} circles of files")
            for u, w in sorted(back):
                print(f"  back up: {u.split(':')[-1]} -> {w.split(':')[-1]}")
    for p in problems:
        print("check-layers: " + p, file=sys.stderr)
    if problems:
        return 1
    if not args.no_rules:
        print(f"check-layers: {len(files)} files keep the layering of docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
