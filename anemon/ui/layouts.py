"""Dashboard layouts: Textual CSS files in the top-level `layouts/` folder, or a user's file.

Resolved before the app starts, so an unknown name is one clear line and exit status 2.
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

from anemon.errors import AnemonError


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
inside their axes) and the arms table fits. A smaller terminal gets the compact layout
unless the operator chose one (`Dashboard.fit_terminal`)."""


def too_small(size: tuple[int, int]) -> bool:
    """A terminal of `size` (columns, rows) is too small for the default layout."""
    return size[0] < DEFAULT_NEEDS[0] or size[1] < DEFAULT_NEEDS[1]


class LayoutError(AnemonError):
    """A --layout that is neither a built-in name nor a readable .tcss file."""

    title = "Unknown layout"


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
    from textual.app import App
    from textual.css.stylesheet import Stylesheet

    sheet = Stylesheet(variables=App().get_css_variables())
    sheet.add_source(css, read_from=(str(path), ""))
    try:
        sheet.parse()
    except Exception as e:  # textual's parse errors have no common public base
        raise LayoutError(f"layout file {path} is not valid Textual CSS: {_first_line(e)}") from e


def _first_line(error: Exception) -> str:
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
