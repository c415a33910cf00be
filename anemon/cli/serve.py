"""`anemon serve [--host H] [--port P] -- COMMAND...`: a dashboard command in a browser.

textual-serve runs COMMAND (an anemon dashboard command: demo, run, watch, replay) for the
browser that opens the page, and relays its terminal over a websocket. There is no
authentication: whoever reaches the address drives the dashboard, so it binds 127.0.0.1
unless told otherwise. One browser at a time: each would start its own COMMAND (a second run
on the same phone), so a second is refused while one is connected.

textual-serve starts COMMAND through a shell (`asyncio.create_subprocess_shell`); the command
line is `exec` and `shlex.join` of `[sys.executable, "-m", "anemon", *COMMAND]`, so every
word is one quoted argument and the process is anemon itself. Nothing a request carries
reaches a file name or a command: the page's query string gives only integers (font size,
terminal size), the static files are a fixed table made at start-up (a request path is a key
in it, never joined to a folder), and the file-download route is not offered.

No COMMAND outlives its browser (anemon/ui/serve.py): the browser gone, COMMAND is asked to
quit and ends as on a hang-up (its recording closed with its summary), killed if it has not
within `QUIT_GRACE_S`. Ends on SIGINT, SIGTERM or SIGHUP with exit 0, once COMMAND has ended;
serve killed, COMMAND hears its stdin end and ends as on a hang-up.
"""

from __future__ import annotations

import argparse
import socket
import sys

from anemon.errors import AnemonError
from anemon.text import printable

DASHBOARD_COMMANDS = ("demo", "run", "watch", "replay")
"""What COMMAND may be: the commands that show a dashboard."""
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve", help="a dashboard command in a browser (no authentication)")
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
    from anemon.ui.serve import server_class

    server = server_class()(command, sock)
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
