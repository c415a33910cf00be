"""The signals that end a command or a feed: SIGINT, SIGTERM, and SIGHUP (a dropped SSH session,
taken as SIGTERM; there is none on Windows).

A module of its own, below everything: the command line holds them from its first moment
(`cli.common.hold_signals`) without importing asyncio, as `feeds.lifecycle` would make it."""

from __future__ import annotations

import signal

SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
