"""textual-serve's Server, narrowed for `anemon serve` (anemon/cli/serve.py says what and why):
the static files a fixed table, no download route, autoescaped templates, one browser at a
time, the start-up line plain text. Here, in ui/, because it is the Textual side."""

from __future__ import annotations

import shlex
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.text import printable

if TYPE_CHECKING:
    from aiohttp import web


def page_url(sock: socket.socket) -> str:
    """The address a browser opens: the bound one, or this machine's name when bound to
    every interface (a browser cannot open 0.0.0.0)."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = socket.getfqdn()
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def server_class() -> type:
    """textual-serve's Server, narrowed (imported here: only `serve` needs aiohttp)."""
    from aiohttp import web
    from textual_serve.server import Server

    class AnemonServer(Server):
        def __init__(self, command: list[str], sock: socket.socket) -> None:
            super().__init__(shlex.join(command), title="anemon", public_url=page_url(sock))
            self.words = command
            self.sock = sock
            self.busy = False
            self.statics = {
                "/static/" + p.relative_to(self.statics_path).as_posix(): p
                for p in Path(self.statics_path).rglob("*")
                if p.is_file()
            }
            """The static files by URL path, fixed now: a request path is looked up here."""

        async def _make_app(self) -> web.Application:
            import aiohttp_jinja2
            import jinja2

            app = web.Application()
            aiohttp_jinja2.setup(
                app, loader=jinja2.FileSystemLoader(self.templates_path), autoescape=True
            )
            app.add_routes([
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                # handle_index builds the static URL from this route's name; the files are
                # served by `static` alone
                web.get("/static/{filename:.*}", self.static, name="static"),
            ])  # fmt: skip
            app.on_startup.append(self.on_startup)
            return app

        async def static(self, request: web.Request) -> web.StreamResponse:
            path = self.statics.get(request.path)
            if path is None:
                raise web.HTTPNotFound()
            return web.FileResponse(path)

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            if self.busy:  # each browser would start its own COMMAND: one at a time
                raise web.HTTPConflict(text="the dashboard is open in another browser\n")
            self.busy = True
            try:
                return await super().handle_websocket(request)
            finally:
                self.busy = False

        async def on_startup(self, app: web.Application) -> None:
            shown = printable(shlex.join(["anemon", *self.words[3:]]))
            print(f"anemon: serving `{shown}` at {self.public_url} (no authentication: anyone "
                  "who can reach this address drives the dashboard); Ctrl-C stops",
                  file=sys.stderr, flush=True)  # fmt: skip

        def serve(self, debug: bool = False) -> None:
            import asyncio

            self.initialize_logging()
            loop = asyncio.new_event_loop()
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(sig, self.request_exit)
            web.run_app(self._make_app(), sock=self.sock, handle_signals=False, loop=loop,
                        print=lambda *_: None)  # fmt: skip

    return AnemonServer
