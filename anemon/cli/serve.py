"""`anemon serve [--host H] [--port P] -- COMMAND...`: a dashboard command in a browser.

textual-serve runs COMMAND (an anemon dashboard command: demo, run, watch, replay) for the
browser that opens the page, and relays its terminal over a websocket. There is no
authentication: whoever reaches the address drives the dashboard, so it binds 127.0.0.1
unless told otherwise. One browser at a time: each would start its own COMMAND (a second run
on the same phone), so a second is refused while one is connected.

textual-serve starts COMMAND through a shell (`asyncio.create_subprocess_shell`); the command
line is made with `shlex.join` from `[sys.executable, "-m", "anemon", *COMMAND]`, so every
word is one quoted argument. Nothing a request carries reaches a file name or a command: the
page's query string gives only integers (font size, terminal size), the static files are a
fixed table made at start-up (a request path is a key in it, never joined to a folder), and
the file-download route is not offered. Ends on SIGINT, SIGTERM or SIGHUP with exit 0.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from anemon.errors import AnemonError
from anemon.text import printable

if TYPE_CHECKING:
    from aiohttp import web

DASHBOARD_COMMANDS = ("demo", "run", "watch", "replay")
"""What COMMAND may be: the commands that show a dashboard."""
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "serve", help="a dashboard command in a browser (textual-serve; no authentication)"
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, metavar="H",
        help=f"the address to bind (default {DEFAULT_HOST}: this machine only)",
    )  # fmt: skip
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, metavar="P",
                        help=f"the port (default {DEFAULT_PORT}; 0: any free one)")  # fmt: skip
    parser.add_argument(
        "words", nargs=argparse.REMAINDER, metavar="-- COMMAND...",
        help="the anemon command to show, e.g. -- watch bench.log",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    command = anemon_command(args.words)
    sock = _bind(args.host, args.port)
    server = _server_class()(command, sock)
    server.serve()
    return 0


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"not a port: '{printable(text)}' (0-65535)")
    return int(text)


def anemon_command(words: list[str]) -> list[str]:
    """The command line textual-serve runs: this Python running anemon with `words` (after
    `--`), checked first (an unknown command or a bad option is one line, exit 2, here)."""
    if words[:1] == ["--"]:
        words = words[1:]
    if not words or words[0] not in DASHBOARD_COMMANDS:
        got = f" (got '{printable(words[0])}')" if words else ""
        raise AnemonError(
            f"serve needs -- COMMAND: one of {', '.join(DASHBOARD_COMMANDS)}{got}; "
            "e.g. anemon serve -- watch bench.log"
        )
    if "--headless" in words:
        raise AnemonError("serve shows the dashboard: drop --headless from COMMAND")
    from anemon.cli import build_parser

    build_parser().parse_args(words)  # a usage error exits 2 with its one line, now
    return [sys.executable, "-m", "anemon", *words]


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound now: an address in use or unknown is one line, exit 2."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
    except OSError as e:
        raise AnemonError(f"serve --host '{printable(host)}': {e.strerror or e}; give an "
                          "address of this machine (default 127.0.0.1)") from None  # fmt: skip
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as e:
        sock.close()
        raise AnemonError(
            f"serve: cannot listen on {printable(host)}:{port} ({e.strerror or e}); "
            "choose another --port (0: any free one)"
        ) from None
    sock.setblocking(False)
    return sock


def page_url(sock: socket.socket) -> str:
    """The address a browser opens: the bound one, or this machine's name when bound to
    every interface (a browser cannot open 0.0.0.0)."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = socket.getfqdn()
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _server_class() -> type:
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
