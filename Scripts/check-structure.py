#!/usr/bin/env python3
"""The structure check `make lint` runs (docs/architecture.md, "Structure rules").

1. Module imports: every `import X` in Sources/<Module>/ must be listed for that module in the table
   "Module imports" of docs/architecture.md (project modules and the toolchain's alike), and every module
   with Swift sources must have a row.
2. Folder graph: inside a module with sub-folders (MockServer, ClientKit) that has a "Folder graph: <Module>"
   table in docs/architecture.md, folder A depends on folder B when a file in A names a type, protocol or
   top-level function declared in B. The graph must have no cycle, and its edges must be the ones the
   table allows. A module without a table is named as not checked.

Prints each violation as `file: what is wrong` and exits 1 when there is one. Only Python's standard
library; reads the tree, writes nothing.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "Sources")
ARCHITECTURE = os.path.join(ROOT, "docs", "architecture.md")

IMPORT = re.compile(
    r"^\s*(?:@[\w()]+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
DECLARATION = re.compile(
    r"^(?:@[\w().,: \"]+\s+)*(?:(?:public|package|internal|private|fileprivate|final|indirect|nonisolated)\s+)*"
    r"(struct|class|enum|protocol|actor|typealias|func)\s+([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
# A name after a dot is a member (`RequestView.Connection`), not a top-level declaration.
IDENTIFIER = re.compile(r"(?<![.\w])[A-Za-z_][A-Za-z0-9_]*\b")


def strip_comments_and_strings(text):
    """Removes comments and string literals, so prose naming a type is no dependency."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return text


def swift_files(directory):
    for base, _, names in os.walk(directory):
        for name in sorted(names):
            if name.endswith(".swift"):
                yield os.path.join(base, name)


def read_table(markdown, heading):
    """Rows of the first table after `heading`, as lists of cells."""
    lines = markdown.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    except StopIteration:
        return None
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if not line.startswith("|") or set(line.replace("|", "").strip()) <= set("-: "):
            continue
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[1:] if rows else []


def names(cell):
    return {name.strip("` ") for name in cell.split(",") if name.strip("` ") and name.strip() != "—"}


def check_imports(markdown, problems):
    rows = read_table(markdown, "### Module imports")
    if rows is None:
        problems.append(f"{ARCHITECTURE}: no '### Module imports' table")
        return
    allowed = {row[0].strip("` "): names(row[1]) for row in rows if len(row) >= 2}
    for module in sorted(os.listdir(SOURCES)):
        directory = os.path.join(SOURCES, module)
        files = list(swift_files(directory))
        if not files:
            continue
        if module not in allowed:
            problems.append(f"Sources/{module}: module has no row in docs/architecture.md's 'Module imports'")
            continue
        used = set()
        for path in files:
            with open(path, encoding="utf-8") as handle:
                for imported in IMPORT.findall(strip_comments_and_strings(handle.read())):
                    used.add(imported)
                    if imported not in allowed[module]:
                        relative = os.path.relpath(path, ROOT)
                        problems.append(
                            f"{relative}: imports {imported}, which docs/architecture.md does not list for {module}"
                        )
        for unused in sorted(allowed[module] - used):
            problems.append(f"Sources/{module}: docs/architecture.md lists {unused}, which no file imports")


def folder_of(module_directory, path):
    relative = os.path.relpath(path, module_directory)
    return relative.split(os.sep)[0] if os.sep in relative else "."


def folder_graph(module_directory):
    """Edges folder -> {folder: example 'file names Type'}."""
    declared = {}
    texts = {}
    for path in swift_files(module_directory):
        with open(path, encoding="utf-8") as handle:
            text = strip_comments_and_strings(handle.read())
        texts[path] = text
        for _, name in DECLARATION.findall(IMPORT.sub(" ", text)):
            declared.setdefault(name, set()).add(folder_of(module_directory, path))
    owner = {name: next(iter(folders)) for name, folders in declared.items() if len(folders) == 1}
    edges = {}
    for path, text in texts.items():
        folder = folder_of(module_directory, path)
        for identifier in set(IDENTIFIER.findall(text)):
            target = owner.get(identifier)
            if target and target != folder and target != ".":
                example = f"{os.path.relpath(path, ROOT)} names {identifier}"
                edges.setdefault(folder, {}).setdefault(target, example)
    return edges


def cycles(edges):
    """Strongly connected components with more than one folder (Tarjan)."""
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for successor in edges.get(node, {}):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for node in sorted(set(edges) | {t for targets in edges.values() for t in targets}):
        if node not in index:
            visit(node)
    return result


def check_folders(markdown, problems, module):
    rows = read_table(markdown, f"### Folder graph: {module}")
    if rows is None:
        print(f"check-structure: Sources/{module}'s folders are not checked (docs/architecture.md has no folder graph for it)")
        return
    directory = os.path.join(SOURCES, module)
    edges = folder_graph(directory)
    for component in cycles(edges):
        members = set(component)
        detail = "; ".join(
            f"{source} -> {target} ({example})"
            for source in component
            for target, example in sorted(edges.get(source, {}).items())
            if target in members
        )
        problems.append(f"Sources/{module}: folder cycle {' <-> '.join(component)}: {detail}")
    allowed = {row[0].strip("` "): names(row[1]) for row in rows if len(row) >= 2}
    for source, targets in sorted(edges.items()):
        for target, example in sorted(targets.items()):
            if target not in allowed.get(source, set()):
                problems.append(
                    f"Sources/{module}/{source}: uses {target}/ ({example}), "
                    f"which docs/architecture.md's folder graph does not allow"
                )


def main():
    with open(ARCHITECTURE, encoding="utf-8") as handle:
        markdown = handle.read()
    problems = []
    check_imports(markdown, problems)
    for module in ("MockServer", "ClientKit"):
        check_folders(markdown, problems, module)
    if "--graph" in sys.argv:
        for module in ("MockServer", "ClientKit"):
            for source, targets in sorted(folder_graph(os.path.join(SOURCES, module)).items()):
                print(f"{module}/{source} -> {', '.join(sorted(targets))}")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
