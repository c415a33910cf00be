"""Headless Chromium driving `anemon serve`'s page over the DevTools protocol, for
tests/cli/test_serve.py and bench/browser_sweep.py: the browser started, a page opened, the
xterm.js terminal's text, cells and size read, keys typed, screenshots taken. Debian's
`chromium` (installed by .ci/run); nothing is downloaded and the network is never used."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

TIMEOUT_S = 30.0
FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
)  # fmt: skip
"""What Chromium needs as root on a closed network: no sandbox, no GPU, no calls home."""
HOOK = """
Object.defineProperty(Object.prototype, 'terminal', {
  configurable: true,
  get() { return undefined; },
  set(value) {
    window.__anemonTerminal = value;
    Object.defineProperty(this, 'terminal',
                          {value, writable: true, configurable: true, enumerable: true});
  },
});
"""
"""Run before the page's scripts: keeps textual.js's xterm.js terminal (the object it sets as
`this.terminal`) where the page's reads below find it."""
SCREEN = """(() => {
  const t = window.__anemonTerminal;
  if (!t || !document.body.classList.contains('-first-byte')) return null;
  const b = t.buffer.active, rows = [];
  for (let i = 0; i < b.length; i++) rows.push(b.getLine(i).translateToString(true, 0, t.cols));
  return rows.join('\\n');
})()"""
"""The terminal's text once it has drawn (textual.js marks the body `-first-byte`), each row
to the terminal's width (a row keeps the cells past it after the terminal narrows)."""
SIZE = "(() => { const t = window.__anemonTerminal; return t ? [t.cols, t.rows] : null; })()"
CELLS = """(() => {
  const t = window.__anemonTerminal, b = t.buffer.active, rows = [];
  const rgb = (mode, value, fallback) => mode === 'rgb' ? value : fallback;
  for (let y = 0; y < b.length; y++) {
    const line = b.getLine(y), row = [];
    for (let x = 0; x < t.cols; x++) {
      const c = line.getCell(x);
      if (!c) break;
      const fg = c.isFgRGB() ? 'rgb' : (c.isFgDefault() ? 'default' : 'palette');
      const bg = c.isBgRGB() ? 'rgb' : (c.isBgDefault() ? 'default' : 'palette');
      let f = rgb(fg, c.getFgColor(), -1), g = rgb(bg, c.getBgColor(), -2);
      if (c.isInverse()) [f, g] = [g, f];
      row.push([c.getChars(), f, g]);
    }
    rows.push(row);
  }
  return rows;
})()"""
"""Every cell as [text, foreground, background]: a 24-bit colour as an integer (Textual
writes true colour); -1 the terminal's default foreground, -2 its default background."""
MISSING = """((chars) => {
  const t = window.__anemonTerminal;
  const font = `${t.options.fontSize}px ${t.options.fontFamily}`;
  const draw = (ch) => {
    const c = document.createElement('canvas');
    c.width = 64; c.height = 64;
    const g = c.getContext('2d');
    g.font = font; g.fillStyle = '#fff'; g.textBaseline = 'top';
    g.fillText(ch, 8, 8);
    return Array.from(g.getImageData(0, 0, 64, 64).data).join(',');
  };
  const box = draw('\\u0378');
  return chars.filter((ch) => draw(ch) === box);
})"""
"""Of `chars`, those the terminal's fonts have no glyph for: drawn in its font as U+0378 (an
unassigned code point, so the missing-character box) is drawn."""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class DevTools:
    """The few DevTools-protocol calls the tests and the sweep need, over one page's
    websocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.last = 0

    async def call(self, method: str, **params: object) -> dict:
        self.last += 1
        await self.ws.send_json({"id": self.last, "method": method, "params": params})
        while True:
            message = await self.ws.receive_json()
            if message.get("id") == self.last:
                assert "error" not in message, message
                return dict(message["result"])

    async def value(self, expression: str) -> Any:
        """What `expression` gives in the page (JSON)."""
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def text(self) -> str:
        """The terminal's text; empty until it has drawn."""
        return str(await self.value(SCREEN) or "")

    async def text_when(self, done: Callable[[str], bool]) -> str:
        """The terminal's text once `done` says so of it (or whatever it shows after
        TIMEOUT_S: a hang guard; the caller asserts)."""
        shown = ""
        deadline = time.monotonic() + TIMEOUT_S
        while not done(shown) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            shown = await self.text()
        return shown

    async def screen_text(self, *texts: str) -> str:
        """The terminal's text once it shows every one of `texts`."""
        return await self.text_when(lambda shown: all(text in shown for text in texts))

    async def size(self) -> tuple[int, int]:
        """The terminal's columns and rows."""
        cols, rows = await self.value(SIZE) or (0, 0)
        return int(cols), int(rows)

    async def cells(self) -> list[list[tuple[str, int, int]]]:
        rows = await self.value(CELLS)
        return [[(str(c), int(f), int(b)) for c, f, b in row] for row in rows]

    async def missing_glyphs(self, chars: list[str]) -> list[str]:
        found = await self.value(f"{MISSING}({json.dumps(chars)})")
        return [str(c) for c in found]

    async def shown_and_missing(self) -> tuple[list[str], list[str]]:
        """The characters beyond ASCII on screen, and those of them drawn as the
        missing-character box."""
        shown = sorted({c for c in await self.text() if ord(c) > 127})
        return shown, await self.missing_glyphs(shown)

    async def viewport(self, width: int, height: int) -> None:
        """The page's size in CSS pixels, as a window resized to it (the page refits)."""
        await self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                        deviceScaleFactor=1, mobile=False)  # fmt: skip
        await self.value("window.dispatchEvent(new Event('resize')), true")

    async def press(self, key: str) -> None:
        """Type one printable key into the focused terminal."""
        await self.call("Input.dispatchKeyEvent", type="char", text=key)

    async def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            await self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                            clickCount=1)  # fmt: skip

    async def screenshot(self, path: Path) -> None:
        png = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(png["data"]))

    async def close_page(self) -> None:
        """Close the page, as its tab closed: its websockets go, this one too."""
        self.last += 1
        await self.ws.send_json({"id": self.last, "method": "Page.close", "params": {}})
        async with asyncio.timeout(TIMEOUT_S):
            while not self.ws.closed:
                await self.ws.receive()


@asynccontextmanager
async def page(
    browser: str, profile: Path, window: tuple[int, int] = (1400, 1000)
) -> AsyncIterator[DevTools]:
    """A page of headless Chromium (about:blank) in a window of `window` pixels, with a fresh
    profile, driven over the DevTools protocol; the browser ended on the way out."""
    process = await asyncio.create_subprocess_exec(
        browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size={window[0]},{window[1]}",
        "about:blank", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    drain = None
    try:
        assert process.stderr is not None
        port = None
        while port is None:
            line = await asyncio.wait_for(process.stderr.readline(), TIMEOUT_S)
            assert line, "chromium exited before it listened"
            if found := re.search(rb"DevTools listening on ws://[^:]+:(\d+)/", line):
                port = int(found.group(1))
        drain = asyncio.create_task(process.stderr.read())  # its log must not fill the pipe
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            target = next(t for t in targets if t["type"] == "page")
            async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                tools = DevTools(ws)
                await tools.call("Page.enable")
                await tools.call("Page.addScriptToEvaluateOnNewDocument", source=HOOK)
                yield tools
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
        if drain is not None:
            await drain
