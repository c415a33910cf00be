"""Textual's, textual-plot's, textual-hires-canvas's and textual-serve's private names are used
in their adapters alone (tests/library_internals.py says what counts as a use), so a release
that moves one breaks one module, which tests/ui/test_adapters.py names."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tests.library_internals import ADAPTERS, REPO, Module, anemon_modules, uses, uses_in


def test_no_module_but_the_adapters_names_a_private_of_textual_or_its_plot_and_serve_libraries():
    found = [
        str(use)
        for path in anemon_modules()
        for use in uses(path, ADAPTERS.get(path.relative_to(REPO).as_posix(), ()))
    ]
    adapters = ", ".join(f"{path} ({', '.join(libs)})" for path, libs in ADAPTERS.items())
    assert not found, (
        "private names of a library used outside its adapter; reach them through a named "
        f"function of the adapter ({adapters}):\n" + "\n".join(found)
    )


def sample(code: str) -> list[str]:
    """The names the rule finds in `code` (run, so its classes' bases are known)."""
    code = textwrap.dedent(code)
    space: dict[str, Any] = {}
    exec(compile(code, "<sample>", "exec"), space)
    return [use.name for use in uses_in(Module.of(code, "sample.py", space))]


@pytest.mark.parametrize(
    ("code", "found"),
    [
        # a private of a library's object reached from outside
        ("def f(screen):\n    screen._refresh_layout(None)\n", ["_refresh_layout"]),
        ('def f(screen):\n    getattr(screen, "_refresh_layout")\n', ["_refresh_layout"]),
        ("from textual._context import active_app\n", ["active_app"]),
        # ... through a parameter annotated with the library's class, whatever the name
        (
            "from textual.widgets import Log\ndef f(log: Log):\n    return log._lines\n",
            ["_lines"],
        ),
        # a subclass reading or overriding what its library base has
        (
            """
            from textual.widget import Widget
            class Mine(Widget):
                def f(self):
                    self._refresh_scrollbars()
            """,
            ["_refresh_scrollbars"],
        ),
        (
            """
            from textual_plot import PlotWidget
            class Mine(PlotWidget):
                def _render_line_plot(self, dataset):
                    super()._render_line_plot(dataset)
            """,
            ["_render_line_plot", "_render_line_plot"],
        ),
        # its own privates are a class's own, even where a library shares the name
        (
            """
            from textual.widget import Widget
            class Mine(Widget):
                def __init__(self):
                    super().__init__()
                    self._ours_alone = 1
                def f(self):
                    return self._ours_alone
            """,
            [],
        ),
        ("class Plain:\n    def __init__(self):\n        self._lines = []\n", []),
    ],
)
def test_the_rule_finds_a_libraries_privates_and_not_ours(code: str, found: list[str]) -> None:
    assert sample(code) == found
