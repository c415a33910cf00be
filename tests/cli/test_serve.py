"""`anemon serve -- COMMAND`: the command line it runs, the page over HTTP, and the dashboard
drawn in headless Chromium (Debian's `chromium`, installed by .ci/run; without it the browser
test fails under CI=true and skips with the reason elsewhere)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from anemon.cli.serve import anemon_command
from anemon.errors import AnemonError
from anemon.ui.serve import OUTPUT_GRACE_S, QUIT_GRACE_S
from tests import browser
from tests.browser import TIMEOUT_S

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "recordings" / "sim-sustain-1b-v2.jsonl"
ARM = "minicpm5_1b_ane_pal8"
STOP_S = QUIT_GRACE_S + OUTPUT_GRACE_S + TIMEOUT_S
"""A hang guard on serve's stop: it may wait for its COMMAND up to QUIT_GRACE_S (killed
after)."""
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


@dataclass(frozen=True)
class Served:
    url: str
    """The page's URL, as serve says it."""
    process: subprocess.Popen[str]


@contextmanager
def serving(cwd: Path, *command: str) -> Iterator[Served]:
    """`anemon serve --port 0 -- COMMAND` as a process, in `cwd` (so is every COMMAND it
    starts: `children` finds them there); yields the page URL it says. What the served app
    writes on stderr (textual-serve relays it to its stdout) goes to cwd/serve.out. Ended
    with SIGTERM (unless the test ended it): exit 0."""
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
        yield Served(match.group(1), process)
    finally:
        ended_here = process.poll() is None
        if ended_here:
            process.terminate()
        process.communicate(timeout=STOP_S)
        for left in children(cwd, process):  # a test that failed leaves none behind
            with suppress(ProcessLookupError):
                os.kill(int(left.split()[0]), signal.SIGKILL)
    if ended_here:
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
    with serving(tmp_path, "replay", str(SAMPLE)) as served:
        url = served.url
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
    with serving(tmp_path, "replay", word) as served:
        ws_url = served.url.replace("http://", "ws://") + "/ws?width=100&height=40"
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
    with serving(tmp_path, "replay", str(SAMPLE)) as served:
        ws_url = served.url.replace("http://", "ws://") + "/ws?width=100&height=40"
        assert asyncio.run(second_browser(ws_url)) == 409


# -- the browser --------------------------------------------------------------------------

FOOTER = "q Quit"
"""The keys footer's first key, as textual's Footer draws it."""
PAUSED = "‖ paused"


def chromium() -> str:
    found = browser.chromium()
    if found is None:
        why = "chromium is not installed (Debian: apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}; .ci/run should have installed it")
        pytest.skip(why)
    return found


async def draw(chromium: str, url: str, profile: Path, shot: Path) -> str:
    """Open `url` in headless Chromium and never click it; the terminal's text once it
    shows ARM and the keys footer (or whatever it shows after TIMEOUT_S); a PNG screenshot
    saved to `shot`."""
    async with browser.page(chromium, profile) as tools:
        await tools.call("Page.navigate", url=url)
        text = await tools.screen_text(ARM, FOOTER)
        await tools.screenshot(shot)
        return text


@pytest.mark.slow
def test_the_dashboard_draws_in_headless_chromium_with_its_keys_before_any_click(tmp_path):
    """The footer shows its keys at once (issue 24: blank until the page was clicked, as
    textual's web driver starts the app blurred)."""
    found = chromium()
    shot = tmp_path / "dashboard.png"
    with serving(tmp_path, "replay", str(SAMPLE)) as served:
        text = asyncio.run(draw(found, served.url + "/", tmp_path / "profile", shot))
    assert ARM in text, f"the arm never appeared; the terminal showed:\n{text}"
    assert "decode tok/s" in text
    assert text.splitlines()[-1].startswith(" " + FOOTER), f"no keys: {text.splitlines()[-1:]}"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


async def pause(chromium: str, url: str, profile: Path) -> tuple[str, list[str], list[str]]:
    """Open `url` and, once the dashboard shows, type space (the replay's pause) without a
    click; the terminal's text once it says so, its characters beyond ASCII and those of
    them drawn as the missing-character box."""
    async with browser.page(chromium, profile) as tools:
        await tools.call("Page.navigate", url=url)
        await tools.screen_text(ARM, FOOTER)
        await tools.press(" ")
        text = await tools.screen_text(PAUSED)
        return (text, *await tools.shown_and_missing())


@pytest.mark.slow
def test_a_key_pauses_the_replay_before_any_click_and_every_character_is_drawn(tmp_path):
    """The keys reach the app before the page is clicked (its terminal focused once it
    draws); the pause's glyph (‖, not ⏸: a missing glyph in the browser's fonts, issue 24)
    and every other character on screen are drawn from the page's fonts, none as the
    missing-character box."""
    found = chromium()
    with serving(tmp_path, "replay", str(SAMPLE)) as served:
        text, shown, missing = asyncio.run(pause(found, served.url + "/", tmp_path / "profile"))
    assert PAUSED in text, f"never paused; the terminal showed:\n{text}"
    braille = [c for c in shown if "\u2800" <= c <= "\u28ff"]
    assert "‖" in shown and "━" in shown and braille  # the pause, an axis, a plot
    assert not missing, f"drawn as missing: {missing}"


# -- no COMMAND outlives its browser or its serve ------------------------------------------


def children(cwd: Path, serve: subprocess.Popen[str]) -> list[str]:
    """What serve started and is still running, from the process table: every process but
    serve working in `cwd` (serve's, which its COMMANDs inherit), as "PID STATE COMMAND"."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == serve.pid:
            continue
        try:  # a process gone meanwhile, or a zombie (no cwd), is not running
            if os.readlink(entry / "cwd") != str(cwd):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        found.append(f"{entry.name} {state} {b' '.join(words).decode(errors='replace')}")
    return found


def children_after(cwd: Path, serve: subprocess.Popen[str], timeout: float) -> list[str]:
    """`children`, once there are none or after `timeout` (a hang guard)."""
    deadline = time.monotonic() + timeout
    while (left := children(cwd, serve)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def assert_closed(recording: Path) -> None:
    """The recording ends with its summary: COMMAND closed it."""
    lines = recording.read_text().splitlines()
    assert lines and json.loads(lines[-1])["kind"] == "summary", lines[-1:]


@asynccontextmanager
async def shown(chromium: str, served: Served, cwd: Path) -> AsyncIterator[browser.DevTools]:
    """The page open in headless Chromium."""
    async with browser.page(chromium, cwd / "profile") as tools:
        await tools.call("Page.navigate", url=served.url + "/")
        yield tools


async def close_after(chromium: str, served: Served, cwd: Path, seconds: float) -> None:
    """Open the page; close it `seconds` after its COMMAND started."""
    async with shown(chromium, served, cwd) as tools:
        async with asyncio.timeout(TIMEOUT_S):
            while not children(cwd, served.process):
                await asyncio.sleep(0.05)
        await asyncio.sleep(seconds)
        await tools.close_page()


@pytest.mark.slow
@pytest.mark.parametrize("seconds", [0.5, 2.0, 5.0])
def test_a_page_closed_at_any_moment_of_start_up_ends_its_command(tmp_path, seconds):
    """The page closed 0.5, 2 or 5 s after its COMMAND started (importing, starting the
    dashboard, running): COMMAND ends, its recording closed with its summary, and serve
    goes on for the next browser."""
    found = chromium()
    with serving(tmp_path, "demo", "--record", "demo.jsonl") as served:
        asyncio.run(close_after(found, served, tmp_path, seconds))
        left = children_after(tmp_path, served.process, STOP_S)
        assert not left, f"still running after the page closed: {left}"
        assert served.process.poll() is None
    assert_closed(tmp_path / "demo.jsonl")


async def stop_serve_while_shown(
    chromium: str, served: Served, cwd: Path, how: signal.Signals
) -> None:
    """Open the page; once the dashboard shows, send `how` to serve and wait for it to end,
    the page still open."""
    async with shown(chromium, served, cwd) as tools:
        text = await tools.screen_text(ARM)
        assert ARM in text, f"the dashboard never showed; the terminal showed:\n{text}"
        served.process.send_signal(how)
        await asyncio.to_thread(served.process.wait, STOP_S)


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_serve_stopped_with_a_browser_connected_leaves_no_command(tmp_path, how):
    """serve ends its COMMAND before it exits: none is running once serve's status is
    known, and its recording is closed with its summary."""
    found = chromium()
    with serving(tmp_path, "demo", "--record", "demo.jsonl") as served:
        asyncio.run(stop_serve_while_shown(found, served, tmp_path, how))
        assert served.process.returncode == 0
        left = children(tmp_path, served.process)
        assert not left, f"serve ({how.name}) exited, leaving {left}"
    assert_closed(tmp_path / "demo.jsonl")


@pytest.mark.slow
def test_a_command_whose_serve_is_killed_ends_and_closes_its_recording(tmp_path):
    """serve killed (no chance to stop COMMAND): COMMAND hears its stdin end and ends as on
    a hang-up, its recording closed with its summary."""
    found = chromium()
    with serving(tmp_path, "demo", "--record", "demo.jsonl") as served:
        asyncio.run(stop_serve_while_shown(found, served, tmp_path, signal.SIGKILL))
        left = children_after(tmp_path, served.process, TIMEOUT_S)
        assert not left, f"still running after serve was killed: {left}"
    assert_closed(tmp_path / "demo.jsonl")
