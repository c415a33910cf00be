"""Dashboard layouts: Textual CSS files in the top-level `layouts/` folder, or a user's file.

Resolved before the app starts, so an unknown name is one clear line and exit status 2.
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anemon.errors import AnemonError
from anemon.ui import textual_compat

if TYPE_CHECKING:
    from textual.app import App
    from textual.css.model import RuleSet
    from textual.dom import DOMNode


def _builtin_dir() -> Path:
    """Where the installed package `anemon.layouts` lies (pyproject maps it to `layouts/`).

    The same for a wheel (site-packages/anemon/layouts) and an editable install (the checkout's
    `layouts/`). A checkout run without installing it (or with an install older than the mapping)
    falls back to the repository's folder.
    """
    try:
        found = resources.files("anemon.layouts")
    except ModuleNotFoundError:
        found = None
    if isinstance(found, Path):
        return found.resolve()
    return Path(__file__).resolve().parents[2] / "layouts"


LAYOUTS_DIR = _builtin_dir()
"""The built-in layouts (the repository's `layouts/`, installed as `anemon.layouts`)."""
BUILTIN = ("default", "compact", "wall", "ab")
"""In the order the layout key cycles through them."""
DEFAULT = LAYOUTS_DIR / "default.tcss"
COMPACT = LAYOUTS_DIR / "compact.tcss"
DEFAULT_NEEDS = (100, 32)
"""Columns and rows the default layout needs: its decode and power charts plot (four rows
inside their axes) and the arms table fits. A smaller terminal gets the compact layout, and
a larger one the default again, unless the operator chose one (`Dashboard.fit_terminal`)."""


def too_small(size: tuple[int, int]) -> bool:
    """A terminal of `size` (columns, rows) is too small for the default layout."""
    return size[0] < DEFAULT_NEEDS[0] or size[1] < DEFAULT_NEEDS[1]


def fitting(size: tuple[int, int]) -> Path:
    """The built-in layout for a terminal of `size` where the operator chose none."""
    return COMPACT if too_small(size) else DEFAULT


class LayoutError(AnemonError):
    """A --layout that is neither a built-in name nor a readable .tcss file."""


def resolve(layout: str, directory: Path = LAYOUTS_DIR) -> Path:
    """A layout NAME (a file in `directory`) or PATH (a .tcss file) as a path."""
    if "/" not in layout and "\\" not in layout and not layout.endswith(".tcss"):
        path = directory / f"{layout}.tcss"
        if path.is_file():
            return path
        names = ", ".join(available(directory))
        raise LayoutError(f"no layout named {layout!r} (built-in: {names}; or give a .tcss path)")
    path = Path(layout).expanduser()
    if not path.is_file():
        raise LayoutError(f"layout file not found: {layout}")
    try:
        css = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise LayoutError(f"cannot read layout file {layout}: {e}") from e
    check(css, path)
    return path.resolve()


def check(css: str, path: Path) -> None:
    """Parse a user's layout now, so a typo is one line at start rather than a crash."""
    try:
        textual_compat.parse_css(css, path)
    except Exception as e:  # textual's parse errors have no common public base
        raise LayoutError(f"layout file {path} is not valid Textual CSS: {first_line(e)}") from e


def first_line(error: Exception) -> str:
    """Textual's CSS errors are rich renderables: render them plainly, keep the gist."""
    from rich.console import Console

    console = Console(width=200, color_system=None, record=True, file=io.StringIO())
    console.print(getattr(error, "errors", None) or str(error), markup=False)
    lines = [line.strip() for line in console.export_text().splitlines()]
    useful = [line for line in lines if line and not line.startswith(("│", "╭", "╰", "─"))]
    return useful[0] if useful else type(error).__name__


def available(directory: Path = LAYOUTS_DIR) -> list[str]:
    """Built-ins first, in cycling order, then any other .tcss a user dropped in the folder."""
    found = {p.stem for p in directory.glob("*.tcss")}
    return [name for name in BUILTIN if name in found] + sorted(found - set(BUILTIN))


def choices(current: Path, directory: Path = LAYOUTS_DIR) -> list[Path]:
    """What the layout key cycles through: the folder's layouts, plus `current` if it is not one."""
    paths = [directory / f"{name}.tcss" for name in available(directory)]
    return paths if current in paths else [*paths, current]


PLACEMENT = frozenset(
    {
        "display", "layout", "dock", "split", "position", "offset", "box_sizing",
        "width", "height", "min_width", "min_height", "max_width", "max_height",
        "margin", "padding", "overflow_x", "overflow_y", "scrollbar_gutter",
        "scrollbar_size_vertical", "scrollbar_size_horizontal", "scrollbar_visibility",
        "align_horizontal", "align_vertical", "content_align_horizontal",
        "content_align_vertical", "grid_size_rows", "grid_size_columns", "grid_rows",
        "grid_columns", "grid_gutter_horizontal", "grid_gutter_vertical", "row_span",
        "column_span", "layers", "layer",
    }
)  # fmt: skip
"""Style rules whose effect stays on the node they are set on (its box and where its
children go): a layout rule setting only these restyles the nodes it matches; any other
rule (a colour, visibility: what descendants may take from their ancestors) restyles the
matched nodes' descendants too."""


def swap(app: App[Any], old: Path, new: Path) -> int:
    """Replace the layout file `old` by `new` in `app`'s stylesheet, restyle only the nodes
    the two files' rules match and place the screen's widgets now, as `refresh_css` does
    (what draws next, a key or a timer, sees the new sizes); the number restyled.

    Textual's `refresh_css` re-parses every source and restyles every node (~110 ms at
    120x40 with 100k trials per arm: the key press's maximum). Only the layout's rules
    change, though (`textual_compat.replace_source`), and a node no such rule matches keeps
    the styles it has; after a change of theme every rule differs and every node is
    restyled, as `refresh_css` would. Raises Textual's stylesheet errors for a file that
    does not parse, with `old` back in place.
    """
    nodes = restyled(app, textual_compat.replace_source(app.stylesheet, old, new))
    textual_compat.restyle(app, nodes)
    textual_compat.lay_out_now(app.screen, app.size)
    return len(nodes)


def restyled(app: App[Any], rules: list[RuleSet]) -> list[DOMNode]:
    """The nodes of every screen (and the app) that `rules` match, in document order, with
    their descendants where a rule sets more than placement (`PLACEMENT`)."""
    found: dict[int, DOMNode] = {}
    roots: list[DOMNode] = [app, *app.screen_stack]
    for root in roots:
        for node in root.walk_children(with_self=True):
            if id(node) in found:
                continue
            hits = textual_compat.matching(rules, node)
            if not hits:
                continue
            found[id(node)] = node
            if any(not PLACEMENT.issuperset(textual_compat.properties(rule)) for rule in hits):
                for child in node.walk_children():
                    found.setdefault(id(child), child)
    return list(found.values())
