"""Turning bench log lines into events (docs/spec/line-protocol.md)."""

from anemon.parsing.protocol import LineParser

__all__ = ["LineParser"]
