"""Text read from a log, a device or a file, made safe to show: its control characters escaped.

A log line is someone else's bytes. Written to a terminal as it is, ESC starts a control
sequence (a screen clear, a clipboard write, a link), so every human-facing output shows the
characters that could act as visible escapes (`\\x1b`, `\\u202e`) instead.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C0 (tab and newline too: one field is one line), DEL, C1, and the bidirectional overrides
that reorder what a reader sees."""


def printable(text: str) -> str:
    """`text` with every control character written as a visible Python-style escape."""
    if text.isascii() and text.isprintable():
        return text  # the common case, without the regex
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
