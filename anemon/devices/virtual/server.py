"""A loopback TCP server, the base of the virtual iPhone's listeners.

`LoopbackServer` listens on an ephemeral 127.0.0.1 port (`port`, `address`), is an async
context manager, and serves each connection through `_serve`: the writer is tracked so that
`stop()` (or a subclass's unplug / off-the-network) can cut every connection at once, a client
hanging up is not an error, and a protocol violation (or any request a handler failed on: one
logged line, never a traceback) only drops that connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Self

from anemon.devices.virtual.plist_io import ProtocolViolation

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

LOOPBACK = "127.0.0.1"


class LoopbackServer:
    """A TCP server on an ephemeral loopback port. Subclasses give `_handle` (each accepted
    connection's handler), `_name` (for "... is not started") and `_log` / `_log_label` (where a
    dropped connection is logged); `_admit`, `_forget` and `_on_stop` are hooks."""

    _name = "the loopback server"
    _log = logging.getLogger(__name__)
    _log_label = "loopback server"

    def __init__(self) -> None:
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, LOOPBACK, 0)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        self._cut_all()
        await self._on_stop()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{self._name} is not started")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def address(self) -> str:
        """`127.0.0.1:PORT`: where clients connect (for the network lockdownd, the phone's
        network address for `--host` / `device.host`)."""
        return f"{LOOPBACK}:{self.port}"

    # -- hooks --------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection accepted on `port`."""
        raise NotImplementedError

    def _admit(self) -> bool:
        """Whether to serve a new connection (False: hang up on it at once)."""
        return True

    def _forget(self, writer: asyncio.StreamWriter) -> None:
        """A served connection is over (called before it is cut)."""

    async def _on_stop(self) -> None:
        """On `stop()`, after every connection is cut, before waiting for the server to close."""

    # -- connections --------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._serve(self._handle, reader, writer)

    async def _serve(
        self, handler: Handler, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve one connection with `handler`, tracked until it ends, then cut."""
        if not self._admit():
            cut(writer)
            return
        self._writers.add(writer)
        try:
            await handler(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client hung up, or an unplug / going off the network cut the socket
        except ProtocolViolation as e:
            self._log.debug("%s: dropping a connection: %s", self._log_label, e)
        except Exception as e:  # a request no handler foresaw: that connection only, one line
            self._log.warning("%s: dropping a connection: %s: %s", self._log_label,
                              type(e).__name__, e)  # fmt: skip
        finally:
            self._writers.discard(writer)
            self._forget(writer)
            cut(writer)

    def _cut_all(self) -> None:
        for writer in list(self._writers):
            cut(writer)


def cut(writer: asyncio.StreamWriter) -> None:
    """Close at once, without flushing: what a pulled cable or a dropped network link does."""
    with contextlib.suppress(Exception):
        writer.transport.abort()
