"""textual-serve's Server, narrowed for `anemon serve` (anemon/cli/serve.py says what and why):
the static files a fixed table, no download route, autoescaped templates, one browser at a
time, the start-up line plain text; the app started focused and the page's terminal focused
once it draws, so the keys footer shows and the keys work before the page is clicked; and no
COMMAND outlives its browser or the server.

textual-serve asks the app to quit when its browser goes and then waits for it without end,
and stops the server with the app still running; textual's web driver ignores its stdin
ending, so an app whose server went (stopped, or killed) ran on without a parent. Here: the
app is run by `HangUpDriver`, which hears that end; each app is stopped within
`QUIT_GRACE_S`, killed after; and the server, stopped, closes the browser's socket and waits
for its app. The one adapter to textual-serve's internals (`AppService._process`, `._task`,
`._build_environment`, `Server._process_messages`: tests/ui/test_adapters.py says when one
moves). Here, in ui/, because it is the Textual side."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.drivers.web_driver import WebDriver

from anemon.feeds.lifecycle import STOP_TIMEOUT_S
from anemon.text import printable

if TYPE_CHECKING:
    from aiohttp import web
    from textual.app import App

QUIT_GRACE_S = STOP_TIMEOUT_S + 20.0
"""How long an app asked to quit may take before it is killed: its start-up (a few seconds on
a busy machine), then its feed's drain (`STOP_TIMEOUT_S`) and the recording's close."""
OUTPUT_GRACE_S = 5.0
"""How long the ended app's last output may take to arrive (a child of it holding stdout)."""


class HangUpDriver(WebDriver):
    """textual's web driver, which hears the server go: its stdin ending while the app runs
    (the server stopped or was killed) is a hang-up, SIGHUP to this process, which the feed's
    lifecycle handles as a closed terminal's (stopped, drained, the recording closed with its
    summary). The server's `quit` stays textual's. And the app starts focused (see
    `start_application_mode`)."""

    def __init__(self, app: App[Any], **options: Any) -> None:
        super().__init__(app, **options)
        self.app = app

    def start_application_mode(self) -> None:
        """textual's, which starts the app blurred (an AppBlur, queued as a callback: a
        textual-web page focuses its app on a click); blurred, textual's Footer never draws
        its keys, so the footer stayed blank until the page was clicked. The focus is queued
        after that blur, so it always comes second; the page's own focus and blur (a click
        elsewhere) follow as textual's."""
        super().start_application_mode()
        self.app.call_later(self.app.post_message, events.AppFocus())

    def run_input_thread(self) -> None:
        super().run_input_thread()
        if not self.exit_event.is_set():  # set when the app stops: this end is not the server's
            os.kill(os.getpid(), signal.SIGHUP)


PAGE = "app_index.html"
"""textual-serve's page (its template), which `handle_index` renders."""
FOCUS = """<script>
  // anemon: the terminal focused once it has drawn, so the keys reach the dashboard before
  // the page is clicked (textual.js focuses it only on a click)
  new MutationObserver((_, observer) => {
    if (document.body.classList.contains("-first-byte")) {
      observer.disconnect();
      document.querySelector(".xterm-helper-textarea")?.focus();
    }
  }).observe(document.body, { attributes: true, attributeFilter: ["class"] });
</script>
</body>"""


def focused_page(page: str) -> str:
    """textual-serve's page with `FOCUS` at the end of its body (a page without one is
    served as it is: tests/ui/test_adapters.py says when it moved)."""
    head, found, tail = page.rpartition("</body>")
    return head + FOCUS + tail if found else page


def page_url(sock: socket.socket) -> str:
    """The address a browser opens: the bound one, or this machine's name when bound to
    every interface (a browser cannot open 0.0.0.0)."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = socket.getfqdn()
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def app_service_class() -> type:
    """textual-serve's AppService (one browser's COMMAND), whose stop always ends it."""
    from textual_serve.app_service import AppService

    class ServedApp(AppService):
        def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
            environment = super()._build_environment(width=width, height=height)
            environment["TEXTUAL_DRIVER"] = f"{__name__}:{HangUpDriver.__name__}"
            return environment

        async def stop(self) -> None:
            """Ask the app to quit and close its stdin (an app that never reads the quit
            hears the hang-up); killed after `QUIT_GRACE_S`, or if this stop is cancelled.
            Returns once it has ended and its output is read; a second call does nothing."""
            process, task, self._task = self._process, self._task, None
            if process is None or task is None:
                return
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._quit(process), QUIT_GRACE_S)
            finally:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
            await process.wait()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(task, OUTPUT_GRACE_S)

        async def _quit(self, process: asyncio.subprocess.Process) -> None:
            await self.send_meta({"type": "quit"})
            self.stdin.close()
            await process.wait()

    return ServedApp


def server_class() -> type:
    """textual-serve's Server, narrowed (imported here: only `serve` needs aiohttp)."""
    from aiohttp import WSCloseCode, web
    from textual_serve.server import Server, to_int

    served_app = app_service_class()

    class AnemonServer(Server):
        def __init__(self, command: list[str], sock: socket.socket) -> None:
            # exec: the process textual-serve holds is the app itself, no shell between them
            super().__init__("exec " + shlex.join(command), title="anemon",
                             public_url=page_url(sock))  # fmt: skip
            self.words = command
            self.sock = sock
            self.websocket: web.WebSocketResponse | None = None
            """The browser's socket, while one is connected."""
            self.stopping = False
            self.statics = {
                "/static/" + p.relative_to(self.statics_path).as_posix(): p
                for p in Path(self.statics_path).rglob("*")
                if p.is_file()
            }
            """The static files by URL path, fixed now: a request path is looked up here."""

        async def make_app(self) -> web.Application:
            """textual-serve's routes, but `static` for its static files and no download."""
            import aiohttp_jinja2
            import jinja2

            app = web.Application()
            index = Path(self.templates_path) / PAGE
            loader = jinja2.DictLoader({PAGE: focused_page(index.read_text(encoding="utf-8"))})
            aiohttp_jinja2.setup(app, loader=loader, autoescape=True)
            app.add_routes([
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                # handle_index builds the static URL from this route's name; the files are
                # served by `static` alone
                web.get("/static/{filename:.*}", self.static, name="static"),
            ])  # fmt: skip
            app.on_startup.append(self.on_startup)
            app.on_shutdown.append(self.on_shutdown)
            return app

        async def static(self, request: web.Request) -> web.StreamResponse:
            path = self.statics.get(request.path)
            if path is None:
                raise web.HTTPNotFound()
            return web.FileResponse(path)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            """textual-serve's, with `ServedApp`: COMMAND runs while the browser is
            connected, and is ended before this returns."""
            if self.websocket is not None:  # each browser would start its own COMMAND
                raise web.HTTPConflict(text="the dashboard is open in another browser\n")
            self.websocket = websocket = web.WebSocketResponse(heartbeat=15)
            try:
                await websocket.prepare(request)
                app = served_app(self.command, write_bytes=websocket.send_bytes,
                                 write_str=websocket.send_str, close=websocket.close,
                                 download_manager=self.download_manager)  # fmt: skip
                try:
                    width = to_int(request.query.get("width", "80"), 80)
                    await app.start(width, to_int(request.query.get("height", "24"), 24))
                    await self._process_messages(websocket, app)
                finally:
                    await app.stop()
            finally:
                self.websocket = None
            return websocket

        async def on_shutdown(self, app: web.Application) -> None:
            """Stopping: the browser's socket closed, so its handler ends COMMAND (aiohttp
            waits for the handler, up to its shutdown timeout of 60 s: > QUIT_GRACE_S)."""
            if self.websocket is not None:
                await self.websocket.close(code=WSCloseCode.GOING_AWAY,
                                           message=b"anemon serve stopped")  # fmt: skip

        async def on_startup(self, app: web.Application) -> None:
            shown = printable(shlex.join(["anemon", *self.words[3:]]))
            print(f"anemon: serving `{shown}` at {self.public_url} (no authentication: anyone "
                  "who can reach this address drives the dashboard); Ctrl-C stops",
                  file=sys.stderr, flush=True)  # fmt: skip

        def request_exit(self) -> None:
            # once: a second signal must not cut short the stop that ends COMMAND
            if not self.stopping:
                self.stopping = True
                super().request_exit()

        def serve(self, debug: bool = False) -> None:
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(sig, self.request_exit)
            web.run_app(self.make_app(), sock=self.sock, handle_signals=False, loop=loop,
                        print=lambda *_: None)  # fmt: skip

    return AnemonServer
