"""Text read from a log, a device or a file, made safe to show: its control characters escaped.

A log line is someone else's bytes. Written to a terminal as it is, ESC starts a control
sequence (a screen clear, a clipboard write, a link), so every human-facing output shows the
characters that could act, or hide, as visible escapes (`\\x1b`, `\\u202e`) instead.
"""

from __future__ import annotations

import re
import unicodedata

_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories written as escapes: controls (C0 with tab and newline, since one field is
one line; DEL; C1), format characters (the bidirectional overrides that reorder what a reader
sees, zero-width characters, the byte-order mark), lone surrogates, line and paragraph
separators."""


_COMMON = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)
"""The escaped characters a log holds in practice, found at C speed; any other (rare) is looked up
by its category."""


def printable(text: str) -> str:
    """`text` with every control or invisible format character written as a Python-style escape."""
    if text.isascii() and text.isprintable():
        return text  # the common case, without looking at each character
    text = _COMMON.sub(lambda match: _escape(match.group()), text)
    if text.isprintable():
        return text
    return "".join(_escape(c) if unicodedata.category(c) in _ESCAPED else c for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
