"""The headless-Chromium sweep of `anemon serve` (issue 24's "Done when"; a check, not timed).

For each sample recording: `anemon serve --port 0 -- replay RECORDING`, its page opened in
headless Chromium (tests/browser.py: Debian's `chromium`, a fresh profile, no network) and
never clicked until the last step; the page sized to about 80x24, 120x40, 200x60 cells, then
80x24 again (the window resized each time, the app never restarted), and at each size:
- the terminal has the size asked for (±1 cell: the page fits whole cells) and the app fills
  it: its keys footer on the last row, no row wider than the terminal;
- the layout is the one for that size (compact below 100x32, the default's charts above:
  `anemon.ui.layouts.fitting`), so it follows both a shrink and a grow;
- every title (the text in a box's top or bottom border: chart names and units, the arms
  table's, the log's) is at least 4.5:1 against its background (WCAG 2), computed from the
  colours of the terminal's cells, as xterm.js holds them;
- no character on screen is drawn as the missing-character box in the terminal's fonts;
- a PNG screenshot is saved.
Then the terminal is clicked and `space` typed: the replay pauses and its "‖ paused" glyph is
checked and shot the same way (⏸ is reported too: why the app does not use it).

Prints one line per check and the screenshots' paths; exit 0 when every check passed, 1 when
one failed, 2 when chromium is missing.

Run: .venv/bin/python bench/browser_sweep.py [--out DIR] [RECORDING...]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anemon.ui.layouts import too_small
from tests import browser
from tests.browser import DevTools

REPO = Path(__file__).resolve().parents[1]
SIZES = ((80, 24), (120, 40), (200, 60), (80, 24))
"""Cells asked for, in order: a shrink and a grow each."""
MIN_CONTRAST = 4.5
FOOTER = "q Quit"
DEFAULT_ONLY = "─ decode tok/s "
"""A chart title the default layout shows and the compact one does not."""
AXIS = "┣━"
"""A chart's axis, drawn once the chart has plotted at its size."""
URL = re.compile(r"at (http://\S+) ")


@dataclass(frozen=True)
class Check:
    what: str
    ok: bool
    detail: str


def luminance(rgb: int) -> float:
    """WCAG 2's relative luminance of a 24-bit colour."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(fg: int, bg: int) -> float:
    light, dark = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def colour(value: int) -> int:
    """A cell's colour; the terminal's defaults as xterm.js's (white on black)."""
    return {-1: 0xFFFFFF, -2: 0x000000}.get(value, value)


def titles(cells: list[list[tuple[str, int, int]]]) -> Iterator[tuple[str, float]]:
    """Each title in a border row (a row holding ╭ or ╰) and its lowest contrast."""
    for row in cells:
        text = "".join(c or " " for c, _, _ in row)
        if "╭" not in text and "╰" not in text:
            continue
        for found in re.finditer(r"(?<=[─━] )[^─━│┃╭╮╰╯]*?\w[^─━│┃╭╮╰╯]*?(?= [─━])", text):
            span = row[found.start() : found.end()]
            worst = min(contrast(colour(f), colour(b)) for c, f, b in span if c.strip())
            yield found.group().strip(), worst


async def fit(tools: DevTools, cols: int, rows: int) -> tuple[int, int]:
    """Size the page to about `cols` x `rows` cells, from the cell size the terminal shows
    now; returns the terminal's size once it has followed."""
    now_cols, now_rows = await tools.size()
    width = await tools.value("window.innerWidth")
    height = await tools.value("window.innerHeight")
    cell_w, cell_h = float(width) / now_cols, float(height) / now_rows
    width, height = math.ceil((cols + 0.5) * cell_w), math.ceil((rows + 0.5) * cell_h)
    for _ in range(3):  # the cell size is an estimate: nudged by what the page fitted
        await tools.viewport(width, height)
        size = await followed(tools, (now_cols, now_rows))
        if size == (cols, rows):
            break
        now_cols, now_rows = size
        width += math.floor((cols - size[0]) * cell_w)
        height += math.floor((rows - size[1]) * cell_h)
    return size


async def followed(tools: DevTools, before: tuple[int, int]) -> tuple[int, int]:
    """The terminal's size once it differs from `before` (the page refits on its resize
    event), or after 10 s (a size the page kept)."""
    for _ in range(50):
        await asyncio.sleep(0.2)
        size = await tools.size()
        if size != before:
            break
    return size


def fills(lines: list[str], size: tuple[int, int]) -> bool:
    """The app has drawn for a terminal of `size`: its footer on the last row, as many rows,
    none wider."""
    return (bool(lines) and FOOTER in lines[-1] and len(lines) == size[1]
            and max(map(len, lines)) <= size[0])  # fmt: skip


async def look(tools: DevTools, name: str, want: tuple[int, int], shot: Path) -> list[Check]:
    """The checks at one size (the page already sized), and its screenshot."""
    size = await fit(tools, *want)
    default = not too_small(size)
    text = await tools.text_when(
        lambda shown: (
            fills(shown.splitlines(), size)
            and (DEFAULT_ONLY in shown) == default
            and (AXIS in shown) == default
        )
    )
    lines = text.splitlines()
    cells = await tools.cells()
    found = sorted(titles(cells), key=lambda t: t[1])
    shown, missing = await tools.shown_and_missing()
    await tools.screenshot(shot)
    where = f"{name} {want[0]}x{want[1]}"
    worst = found[0] if found else ("(none)", 0.0)
    return [
        Check(f"{where}: size", abs(size[0] - want[0]) <= 1 and abs(size[1] - want[1]) <= 1,
              f"{size[0]}x{size[1]} cells"),
        Check(f"{where}: fills it", fills(lines, size),
              f"{len(lines)} rows, widest {max(map(len, lines), default=0)}"),
        Check(f"{where}: layout", (DEFAULT_ONLY in text) == default,
              "default" if default else "compact"),
        Check(f"{where}: charts", (AXIS in text) == default,
              ("plotted" if AXIS in text else "not plotted") if default else "none (compact)"),
        Check(f"{where}: titles ≥ {MIN_CONTRAST}:1", bool(found) and worst[1] >= MIN_CONTRAST,
              f"{len(found)} titles, lowest {worst[1]:.1f}:1 ({worst[0]!r})"),
        Check(f"{where}: glyphs", not missing,
              f"{len(shown)} non-ASCII characters, missing: {''.join(missing) or 'none'}"),
    ]  # fmt: skip


async def pause(tools: DevTools, name: str, shot: Path) -> list[Check]:
    """Click the terminal, type space: the replay pauses; its glyph drawn, and ⏸'s."""
    width = await tools.value("window.innerWidth")
    await tools.click(float(width) / 2, 5)
    await tools.press(" ")
    text = await tools.screen_text("‖ paused")
    await tools.screenshot(shot)
    missing = await tools.missing_glyphs(["‖", "⏸"])
    return [
        Check(f"{name}: space pauses", "‖ paused" in text, "‖ paused" if "‖ paused" in text
              else "no pause shown"),
        Check(f"{name}: ‖ drawn", "‖" not in missing,
              f"⏸ would be {'a missing box' if '⏸' in missing else 'drawn'}"),
    ]  # fmt: skip


@contextmanager
def serving(recording: Path, cwd: Path) -> Iterator[str]:
    """`anemon serve --port 0 -- replay RECORDING`; yields its page's URL; stopped after."""
    with (cwd / "serve.out").open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "anemon", "serve", "--port", "0", "--", "replay",
             str(recording)], cwd=cwd, stdout=out, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        found = URL.search(first)
        if not found:
            raise SystemExit(f"browser_sweep: serve said no URL: {first!r}")
        yield found.group(1) + "/"
    finally:
        process.terminate()
        process.communicate(timeout=120)


async def sweep(chromium: str, recording: Path, out: Path, work: Path) -> list[Check]:
    name = recording.stem
    checks: list[Check] = []
    with serving(recording, work) as url:
        async with browser.page(chromium, work / "profile", window=(800, 500)) as tools:
            await tools.call("Page.navigate", url=url)
            await tools.screen_text(FOOTER)
            for i, want in enumerate(SIZES):
                shot = out / f"{name}-{i + 1}-{want[0]}x{want[1]}.png"
                checks += await look(tools, name, want, shot)
            checks += await pause(tools, name, out / f"{name}-paused.png")
    return checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recordings", nargs="*", type=Path,
                        default=sorted((REPO / "recordings").glob("*.jsonl")))  # fmt: skip
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("anemon-exports/browser-sweep"),
        help="where the screenshots go (default anemon-exports/browser-sweep)",
    )
    args = parser.parse_args()
    chromium = browser.chromium()
    if chromium is None:
        print("browser_sweep: chromium is not installed (Debian: apt-get install chromium)",
              file=sys.stderr)  # fmt: skip
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for recording in args.recordings:
        with tempfile.TemporaryDirectory() as work:
            checks = asyncio.run(sweep(chromium, recording.resolve(), args.out, Path(work)))
        for check in checks:
            print(f"{'ok  ' if check.ok else 'FAIL'} {check.what}: {check.detail}", flush=True)
            failed += not check.ok
    print(f"{failed} failed; screenshots in {args.out.resolve()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
