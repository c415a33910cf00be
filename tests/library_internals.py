"""Where anemon names a private attribute of Textual, textual-plot, textual-hires-canvas,
textual-serve or pymobiledevice3: its modules' syntax read against the private names the
installed libraries define (`uses`). For tests/test_library_internals.py (no module but the
adapters uses one) and tests/ui/test_adapters.py (every name an adapter uses is checked there).

A private name has one leading underscore. A use of a library's is:
- `self._x`, `cls._x` or `super()._x` in a class whose library bases define `_x` (in their
  class body, or as `self._x` in their code), and a method or class attribute `_x` there (an
  override); the same for `p._x` where the function's parameter `p` is annotated with a class;
- `anything._x` on another object, and `getattr(anything, "_x")`, where a library defines
  `_x` and none of anemon's classes has it as its own: the object's type is not known, so a
  name a library happens to share is allowed only where one of our classes made it;
- an import of a library's private module or name (`from textual._x import y`).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LIBRARIES = ("textual", "textual_plot", "textual_hires_canvas", "textual_serve", "pymobiledevice3")
"""The libraries whose private names stay in their adapters (import names)."""
ADAPTERS = {
    "anemon/ui/textual_compat.py": ("textual",),
    "anemon/ui/charts/plotlib.py": ("textual_plot", "textual_hires_canvas"),
    "anemon/ui/serve.py": ("textual_serve",),
    "anemon/devices/pmd3/raw_tap.py": ("pymobiledevice3",),
}
"""Each adapter, and the libraries whose private names it alone may use."""


@dataclass(frozen=True)
class Use:
    """One use of a library's private name."""

    path: str
    """The module's, from the repository's root."""
    line: int
    name: str
    libraries: frozenset[str]
    """The libraries that define the name (of `self._x`: the base's)."""
    how: str
    """The code, or what it does."""

    def __str__(self) -> str:
        where = ", ".join(sorted(self.libraries))
        return f"{self.path}:{self.line}: {self.how} (private in {where})"


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def library_of(module: str) -> str | None:
    top = module.split(".")[0]
    return top if top in LIBRARIES else None


# -- what the libraries define ---------------------------------------------------------------


@cache
def library_privates() -> dict[str, frozenset[str]]:
    """Every private name the installed libraries define or use, with the libraries that do."""
    found: dict[str, set[str]] = {}
    for (module, _), names in _library_names().items():
        for name in names:
            found.setdefault(name, set()).add(module.split(".")[0])
    return {name: frozenset(libraries) for name, libraries in found.items()}


@cache
def _library_names() -> dict[tuple[str, str], frozenset[str]]:
    """The libraries' private names by (module, class qualified name): a class's are those in
    its body and its `self._x`; under (module, "") all the module names as attributes,
    functions and classes, and what it binds at the top."""
    out: dict[tuple[str, str], frozenset[str]] = {}
    for library in LIBRARIES:
        spec = importlib.util.find_spec(library)
        assert spec is not None and spec.submodule_search_locations, f"{library} not installed"
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in root.rglob("*.py"):
            parts = (library, *path.relative_to(root).with_suffix("").parts)
            module = ".".join(parts).removesuffix(".__init__")
            tree = ast.parse(path.read_bytes())
            out[(module, "")] = frozenset(filter(private, _attribute_names(tree)))
            for cls, qualname in _classes(tree):
                out[(module, qualname)] = frozenset(filter(private, _own_names(cls)))
    return out


def _classes(tree: ast.AST, prefix: str = "") -> Iterator[tuple[ast.ClassDef, str]]:
    """The classes of a module, nested ones too, with their qualified names."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            yield node, prefix + node.name
            yield from _classes(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _classes(node, f"{prefix}{node.name}.<locals>.")


def _attribute_names(tree: ast.Module) -> Iterator[str]:
    """What may be an attribute of something: names used as attributes, functions, classes,
    and what a module or a class body binds (not a function's local variables)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        if isinstance(node, ast.Module | ast.ClassDef):
            for child in node.body:
                yield from _defined(child)


def _own_names(cls: ast.ClassDef, stored_only: bool = False) -> Iterator[str]:
    """What the class body binds, and its `self._x` (all, or only those assigned)."""
    for child in cls.body:
        yield from _defined(child)
    for node in ast.walk(cls):
        stored = isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
        if isinstance(node, ast.Attribute) and _is_self(node.value) and (stored or not stored_only):
            yield node.attr


def _defined(node: ast.AST) -> Iterator[str]:
    """The names a statement binds: a function, a class, an assignment's plain names."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.Assign):
        yield from (target.id for target in node.targets if isinstance(target, ast.Name))
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        yield node.target.id


def inherited(bases: Iterable[type]) -> dict[str, str]:
    """The private names that the library classes among `bases` and their ancestors define,
    each with the first class defining it ("module.Class")."""
    out: dict[str, str] = {}
    for base in bases:
        for cls in base.__mro__:
            if library_of(cls.__module__):
                names = {name for name in vars(cls) if private(name)}
                names |= _library_names().get((cls.__module__, cls.__qualname__), set())
                for name in names:
                    out.setdefault(name, f"{cls.__module__}.{cls.__qualname__}")
    return out


def _is_self(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


# -- anemon's modules ------------------------------------------------------------------------

Inherits = dict[str, str]
"""The private names a class has from library classes, each with the first of them."""


@dataclass(frozen=True)
class Module:
    """A module's syntax, what its names are bound to, and what each of its classes inherits
    (None: a base could not be resolved, so any library's private name counts there)."""

    path: str
    tree: ast.Module
    space: dict[str, Any]
    classes: dict[ast.ClassDef, Inherits | None]

    @classmethod
    def of(cls, source: str | bytes, path: str, space: dict[str, Any]) -> Module:
        tree = ast.parse(source)
        space = _imported(tree) | space
        classes = {n: _bases(n, space) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        return cls(path, tree, space, classes)


@cache
def read(path: Path) -> Module:
    """The module at `path` (in anemon/), imported to know its names (but `__main__`: that
    would run the program)."""
    name = ".".join(path.with_suffix("").relative_to(REPO).parts).removesuffix(".__init__")
    space = {} if name.endswith("__main__") else vars(importlib.import_module(name))
    return Module.of(path.read_bytes(), path.relative_to(REPO).as_posix(), space)


def _imported(tree: ast.Module) -> dict[str, Any]:
    """What the module's imports bind, those inside functions and `TYPE_CHECKING` too (a
    class made in a function takes its bases from there)."""
    space: dict[str, Any] = dict(vars(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                try:
                    module = importlib.import_module(node.module)
                    space[alias.asname or alias.name] = getattr(module, alias.name)
                except (ImportError, AttributeError):
                    continue
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:  # import a.b as c: c is a.b
                    space[alias.asname] = importlib.import_module(alias.name)
                else:  # import a.b: a
                    top = alias.name.split(".")[0]
                    space[top] = importlib.import_module(top)
    return space


def _class_of(node: ast.expr, space: dict[str, Any]) -> type | None:
    """The class an expression (a base, an annotation) names, or None."""
    try:
        value = eval(compile(ast.Expression(node), "<expression>", "eval"), space)
    except Exception:
        return None
    value = typing.get_origin(value) or value  # App[None]: App
    return value if isinstance(value, type) else None


def _bases(node: ast.ClassDef, space: dict[str, Any]) -> Inherits | None:
    bases = [_class_of(base, space) for base in node.bases]
    return None if None in bases else inherited(b for b in bases if b is not None)


def anemon_modules() -> list[Path]:
    return sorted((REPO / "anemon").rglob("*.py"))


@cache
def ours() -> frozenset[str]:
    """The private names anemon's own code defines: at the top of a module, and in a class
    (methods, class attributes, `self._x =`) that no library base gives them (none of a class
    whose bases could not be resolved: it may have them from a library)."""
    names: set[str] = set()
    for path in anemon_modules():
        module = read(path)
        for node in module.tree.body:
            names.update(_defined(node))
        for cls, inherits in module.classes.items():
            if inherits is not None:
                names.update(n for n in _own_names(cls, stored_only=True) if n not in inherits)
    return frozenset(filter(private, names))


# -- the uses --------------------------------------------------------------------------------


def uses(path: Path, allowed: Iterable[str] = ()) -> list[Use]:
    """The uses of the libraries' private names in the module at `path` (in anemon/), but
    those of the `allowed` libraries."""
    return uses_in(read(path), allowed)


def uses_in(module: Module, allowed: Iterable[str] = ()) -> list[Use]:
    found: list[Use] = []
    allowed = frozenset(allowed)

    def add(node: ast.AST, name: str, libraries: frozenset[str], how: str) -> None:
        if not libraries & allowed:
            found.append(Use(module.path, getattr(node, "lineno", 0), name, libraries, how))

    def visit(node: ast.AST, inherits: Inherits | None, typed: dict[str, Inherits]) -> None:
        if isinstance(node, ast.ClassDef):
            inherits = module.classes[node]
            for child in node.body:
                for name in _defined(child):
                    if base := (inherits or {}).get(name):
                        add(child, name, _library(base), f"{node.name}.{name} overrides {base}'s")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            typed = typed | _typed(node, module.space)
        elif isinstance(node, ast.Attribute) and private(node.attr):
            _attribute(node, inherits, typed, add)
        elif isinstance(node, ast.Call) and (name := _getattr_name(node)):
            if name in library_privates() and name not in ours():
                add(node, name, library_privates()[name], ast.unparse(node))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            _import(node, add)
        for child in ast.iter_child_nodes(node):
            visit(child, inherits, typed)

    visit(module.tree, None, {})
    return found


def _typed(
    function: ast.FunctionDef | ast.AsyncFunctionDef, space: dict[str, Any]
) -> dict[str, Inherits]:
    """The function's parameters annotated with a class, each with what that class inherits
    from libraries: `log: Log` makes `log._lines` a use of Log's `_lines`."""
    typed = {}
    arguments = function.args
    for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        if arg.annotation is not None and (cls := _class_of(arg.annotation, space)):
            typed[arg.arg] = inherited([cls])
    return typed


def _attribute(
    node: ast.Attribute, inherits: Inherits | None, typed: dict[str, Inherits], add: Any
) -> None:
    name = node.attr
    known = inherits if _is_self(node.value) else None
    if isinstance(node.value, ast.Name) and node.value.id in typed:
        known = typed[node.value.id]
    if known is not None:
        if base := known.get(name):
            add(node, name, _library(base), f"{ast.unparse(node)}, {base}'s")
    elif name in library_privates() and name not in ours():
        add(node, name, library_privates()[name], ast.unparse(node))


def _getattr_name(node: ast.Call) -> str | None:
    """The private name `getattr(x, "_name")` (or set-, has-, delattr) asks for."""
    if not (isinstance(node.func, ast.Name) and len(node.args) >= 2):
        return None
    if node.func.id not in ("getattr", "setattr", "hasattr", "delattr"):
        return None
    name = node.args[1]
    if isinstance(name, ast.Constant) and isinstance(name.value, str) and private(name.value):
        return name.value
    return None


def _import(node: ast.ImportFrom | ast.Import, add: Any) -> None:
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        names = [alias.name for alias in node.names]
        imported = [(module, name) for name in names]
    else:
        imported = [(alias.name, "") for alias in node.names]
    for module, name in imported:
        library = library_of(module)
        if library and (private(name) or any(map(private, module.split(".")))):
            add(node, name or module, frozenset({library}), ast.unparse(node))


def _library(where: str) -> frozenset[str]:
    return frozenset({where.split(".")[0]})
