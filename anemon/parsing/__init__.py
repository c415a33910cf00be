"""Turning bench log lines into events (spec/line-protocol.md)."""

from anemon.parsing.protocol import LineParser

__all__ = ["LineParser"]
