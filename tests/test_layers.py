"""No two modules of anemon/ import each other, directly or round a longer circle.

import-linter's layers contract (pyproject.toml) orders the packages; inside a package nothing
orders the modules, and an import inside a function hides a circle from a reader (and from
Python until the function runs). So this walks every module's syntax tree: every `import` and
`from ... import` anywhere in it (inside functions, methods and `if TYPE_CHECKING:` blocks too:
a circle of types is still a circle of knowledge), relative imports resolved. `from a import b`
is an edge to the module `a.b` when there is one, else to `a`; the packages Python runs on the
way (`a/__init__.py` for `a.b`) are not edges, or every package importing its own modules would
be a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import anemon

ROOT = Path(anemon.__file__).parent


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module under `root` by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of `known` that module `name` (at `path`) imports, wherever it does."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            targets.update(_member(base, alias.name, known) for alias in node.names)
    return {module for t in targets if (module := _known(t, known)) not in (None, name)}


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _member(base: str, member: str, known: Mapping[str, Path]) -> str:
    """`from base import member`: the module `base.member`, or a name in `base`."""
    return f"{base}.{member}" if f"{base}.{member}" in known else base


def _known(target: str, known: Mapping[str, Path]) -> str | None:
    """The innermost module of `known` that `target` names (None: outside anemon)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Each strongly connected set of two or more modules, as one circle through some of them
    (Tarjan's algorithm, iteratively: the graph is a few hundred modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(_circle(min(members), members, edges))
    return found


def _circle(start: str, members: set[str], edges: Mapping[str, set[str]]) -> list[str]:
    """A shortest way from `start` back to itself inside `members` (breadth first)."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        later = []
        for node in frontier:
            for child in sorted(edges[node] & members):
                if child == start:
                    return [*paths[node], start]
                if child not in paths:
                    paths[child] = [*paths[node], child]
                    later.append(child)
        frontier = later
    raise AssertionError(f"{start} is in no circle of {sorted(members)}")


def test_no_module_imports_itself_round_a_circle() -> None:
    found = [" -> ".join(circle) for circle in cycles(graph())]
    assert found == [], "import circles:\n" + "\n".join(found)


def test_the_walk_sees_imports_inside_functions_and_type_checking_blocks(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import a\n")
    (package / "sub" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
    )
    (package / "b.py").write_text("def f():\n    from .sub.a import x\n    import pkg.c\n")
    (package / "c.py").write_text("from .sub import a\n")
    edges = graph(package)
    assert edges == {
        "pkg": set(), "pkg.sub": {"pkg.sub.a"}, "pkg.sub.a": {"pkg.b"},
        "pkg.b": {"pkg.sub.a", "pkg.c"}, "pkg.c": {"pkg.sub.a"},
    }  # fmt: skip
    assert cycles(edges) == [["pkg.b", "pkg.sub.a", "pkg.b"]]
