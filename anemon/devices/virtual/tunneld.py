"""A stand-in for `pymobiledevice3 remote tunneld`: the HTTP list of the tunnels it holds.

The real daemon answers `GET /` on 127.0.0.1:49151 with `{udid: [{tunnel-address, tunnel-port,
interface}]}`, each entry the RSD of one phone's tunnel (pymobiledevice3 `tunneld/api.py`).
The stand-in listens on an ephemeral loopback port instead (anemon reaches it through
`ANEMON_TUNNELD_ADDRESS`, docs/devices.md) and lists the virtual phones' RSDs (`rsd.py`).

pymobiledevice3 asks with a blocking `requests.get` inside its event loop (up to 5 s), so
the answer comes from a thread of its own: served from the loop the client blocks, it would
never come. The thread reads only `tunnels`, a tuple replaced whole by `add`/`remove`, and
each tunnel's `up` flag (a phone unplugged has no tunnel: tunneld stops listing it).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from anemon.devices.virtual.server import LOOPBACK

POLL_S = 0.05
"""How often the serving thread checks for `stop()`: it bounds how long stopping takes."""
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tunnel:
    """One phone's tunnel as tunneld lists it."""

    udid: str
    address: str
    """The phone's end of the tunnel, where its RSD and services listen."""
    port: int
    """The RSD port at `address`."""
    interface: str = "utun-virtual"
    """The host's tunnel interface (a name only: nothing routes through it here)."""

    def entry(self) -> dict[str, Any]:
        return {"tunnel-address": self.address, "tunnel-port": self.port,
                "interface": self.interface}  # fmt: skip


class VirtualTunneld:
    """tunneld's HTTP listing on a loopback port (`port` 0: an ephemeral one), served by a
    thread; a context manager, plain or async (like the phone)."""

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self.tunnels: tuple[tuple[Tunnel, Callable[[], bool]], ...] = ()
        """What `GET /` lists: each tunnel while its `up()` is true."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def add(self, tunnel: Tunnel, up: Callable[[], bool] = lambda: True) -> None:
        """List `tunnel` while `up()` (called from the serving thread: it reads a flag, no more)."""
        self.tunnels = (*self.tunnels, (tunnel, up))

    def remove(self, udid: str) -> None:
        """tunneld no longer holds a tunnel to `udid` (it was stopped for that phone)."""
        self.tunnels = tuple(t for t in self.tunnels if t[0].udid != udid)

    def listing(self) -> dict[str, list[dict[str, Any]]]:
        """The body of `GET /`."""
        answer: dict[str, list[dict[str, Any]]] = {}
        for tunnel, up in self.tunnels:
            if up():
                answer.setdefault(tunnel.udid, []).append(tunnel.entry())
        return answer

    @property
    def address(self) -> str:
        """`127.0.0.1:PORT`, the value for `ANEMON_TUNNELD_ADDRESS`."""
        if self._server is None:
            raise RuntimeError("the virtual tunneld is not started")
        return f"{LOOPBACK}:{self._server.server_address[1]}"

    def start(self) -> None:
        self._server = ThreadingHTTPServer((LOOPBACK, self._port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(POLL_S,),
                                        name="virtual-tunneld", daemon=True)  # fmt: skip
        self._thread.start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()  # returns within POLL_S
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return self.__enter__()

    async def __aexit__(self, *_: object) -> None:
        self.stop()


def _handler(tunneld: VirtualTunneld) -> type[BaseHTTPRequestHandler]:
    class ListTunnels(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/":
                self.send_error(404, "tunneld serves / only")
                return
            body = json.dumps(tunneld.listing()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (its signature)
            log.debug("virtual tunneld: " + format, *args)

    return ListTunnels
