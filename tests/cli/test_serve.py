"""`anemon serve -- COMMAND`: the command line it runs, the page over HTTP, and the dashboard
drawn in headless Chromium (Debian's `chromium`, installed by .ci/run; without it the browser
test fails under CI=true and skips with the reason elsewhere)."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp
import pytest

from anemon.cli.serve import anemon_command
from anemon.errors import AnemonError

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "recordings" / "sim-sustain-1b-v2.jsonl"
ARM = "minicpm5_1b_ane_pal8"
TIMEOUT_S = 30.0
URL = re.compile(r"at (http://\S+) ")


def test_the_command_is_this_python_running_anemon_with_every_word_quoted():
    hostile = "$(touch pwned); `id` 'x\" | rm -rf ~"
    command = anemon_command(["--", "replay", hostile])
    assert command == [sys.executable, "-m", "anemon", "replay", hostile]
    assert shlex.split(shlex.join(command)) == command  # the shell sees the same words


@pytest.mark.parametrize(
    ("words", "says"),
    [([], "serve needs -- COMMAND"), (["summary", "x"], "got 'summary'"),
     (["serve", "--", "demo"], "got 'serve'"), (["demo", "--headless"], "drop --headless")],
)  # fmt: skip
def test_only_a_dashboard_command_is_served(words, says):
    with pytest.raises(AnemonError, match=re.escape(says)):
        anemon_command(words)


def test_a_bad_option_in_the_command_is_a_usage_error_before_serving(capsys):
    with pytest.raises(SystemExit) as exit_:
        anemon_command(["demo", "--speed", "fast"])
    assert exit_.value.code == 2
    assert "not a speed" in capsys.readouterr().err


@contextmanager
def serving(cwd: Path, *command: str) -> Iterator[str]:
    """`anemon serve --port 0 -- COMMAND` as a process; yields the page URL it says. What
    the served app writes on stderr (textual-serve relays it to its stdout) goes to
    cwd/serve.out."""
    with (cwd / "serve.out").open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "anemon", "serve", "--port", "0", "--", *command],
            cwd=cwd, stdout=out, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        match = URL.search(first)
        assert match, f"no URL in {first!r}"
        assert "no authentication" in first and match.group(1).startswith("http://127.0.0.1:")
        yield match.group(1)
    finally:
        process.terminate()
        process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == 0


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, b""


@pytest.mark.slow
def test_the_page_is_served_and_nothing_outside_it(tmp_path):
    with serving(tmp_path, "replay", str(SAMPLE)) as url:
        status, page = fetch(url + "/")
        assert status == 200
        assert b'data-session-websocket-url="ws://127.0.0.1:' in page
        assert fetch(url + "/static/js/textual.js")[0] == 200
        for path in ("/static/", "/static/../server.py", "/static/%2e%2e/server.py",
                     "/download/x", "/templates/app_index.html"):  # fmt: skip
            assert fetch(url + path)[0] == 404, path


async def connect_until(ws_url: str, log: Path, text: str) -> None:
    """Open the dashboard's websocket (which starts COMMAND) until `text` is in `log`."""
    async with aiohttp.ClientSession() as session, session.ws_connect(ws_url):
        deadline = time.monotonic() + TIMEOUT_S
        while text not in log.read_text() and time.monotonic() < deadline:
            await asyncio.sleep(0.1)


@pytest.mark.slow
def test_a_hostile_command_word_never_reaches_the_shell(tmp_path):
    """The words after `--` are arguments, whatever they hold: the app starts and says it
    cannot find that SOURCE, spelled as given; the shell never runs what the word spells."""
    word = "$(touch pwned);touch pwned2"
    with serving(tmp_path, "replay", word) as url:
        ws_url = url.replace("http://", "ws://") + "/ws?width=100&height=40"
        asyncio.run(connect_until(ws_url, tmp_path / "serve.out", word))
    assert word in (tmp_path / "serve.out").read_text()  # the app got it as one argument
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


async def second_browser(ws_url: str) -> int:
    """While one browser is connected, what a second one's handshake gets."""
    async with aiohttp.ClientSession() as session, session.ws_connect(ws_url):
        try:
            async with session.ws_connect(ws_url):
                return 101
        except aiohttp.WSServerHandshakeError as error:
            return error.status


@pytest.mark.slow
def test_one_browser_at_a_time(tmp_path):
    with serving(tmp_path, "replay", str(SAMPLE)) as url:
        ws_url = url.replace("http://", "ws://") + "/ws?width=100&height=40"
        assert asyncio.run(second_browser(ws_url)) == 409


# -- the browser --------------------------------------------------------------------------

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
`this.terminal`) where the test can read what the terminal holds."""
SCREEN = """(() => {
  const t = window.__anemonTerminal;
  if (!t || !document.body.classList.contains('-first-byte')) return null;
  const b = t.buffer.active, rows = [];
  for (let i = 0; i < b.length; i++) rows.push(b.getLine(i).translateToString(true));
  return rows.join('\\n');
})()"""
"""The terminal's text once it has drawn (textual.js marks the body `-first-byte`)."""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        why = "chromium is not installed (Debian: apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}; .ci/run should have installed it")
        pytest.skip(why)
    return found


class DevTools:
    """The few DevTools-protocol calls the test needs, over one page's websocket."""

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


async def draw(browser: str, url: str, profile: Path, shot: Path) -> str:
    """Open `url` in headless Chromium; the terminal's text once it shows ARM (or whatever
    it shows after TIMEOUT_S); a PNG screenshot saved to `shot`."""
    process = await asyncio.create_subprocess_exec(
        browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
        f"--user-data-dir={profile}", "--window-size=1400,1000", "about:blank",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        port = None
        while port is None:
            line = await asyncio.wait_for(process.stderr.readline(), TIMEOUT_S)
            assert line, "chromium exited before it listened"
            if found := re.search(rb"DevTools listening on ws://[^:]+:(\d+)/", line):
                port = int(found.group(1))
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            page = next(t for t in targets if t["type"] == "page")
            async with session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                tools = DevTools(ws)
                await tools.call("Page.enable")
                await tools.call("Page.addScriptToEvaluateOnNewDocument", source=HOOK)
                await tools.call("Page.navigate", url=url)
                text = ""
                deadline = time.monotonic() + TIMEOUT_S
                while ARM not in text and time.monotonic() < deadline:
                    await asyncio.sleep(0.2)
                    result = await tools.call("Runtime.evaluate", expression=SCREEN,
                                              returnByValue=True)  # fmt: skip
                    text = result["result"].get("value") or ""
                png = await tools.call("Page.captureScreenshot", format="png")
                shot.write_bytes(base64.b64decode(png["data"]))
                return text
    finally:
        process.terminate()
        await process.wait()


@pytest.mark.slow
def test_the_dashboard_draws_in_headless_chromium(tmp_path):
    browser = chromium()
    shot = tmp_path / "dashboard.png"
    with serving(tmp_path, "replay", str(SAMPLE)) as url:
        text = asyncio.run(draw(browser, url + "/", tmp_path / "profile", shot))
    assert ARM in text, f"the arm never appeared; the terminal showed:\n{text}"
    assert "decode tok/s" in text
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
