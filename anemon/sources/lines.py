"""Turn a stream of byte chunks into complete text lines (line-protocol.md, "Lines").

Independent of files on purpose: the mirror tailer feeds it what it reads past its offset, and
device backends feed it raw chunks (AFC partial reads, console streams) as they arrive.
"""

from __future__ import annotations

DEFAULT_MAX_LINE_BYTES = 1 << 20  # 1 MiB: far beyond any real record, small enough to hold


class LineAssembler:
    """Split fed bytes into complete lines; keep the incomplete tail for the next `feed`.

    A line is complete only once its `\\n` has arrived; the `\\n` and one `\\r` before it are
    stripped. Text is decoded as UTF-8 with replacement characters, so decoding never raises
    (and a multi-byte character split across chunks is decoded whole, since only complete
    lines are decoded). A line longer than `max_line_bytes` keeps its first `max_line_bytes`
    bytes, counts the rest without holding them, and is emitted with a
    ` …[truncated N bytes]` marker when its newline arrives: memory stays bounded.
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self._max = max_line_bytes
        self._held = bytearray()  # start of the incomplete line, at most `_max` bytes
        self._dropped = 0  # bytes of the incomplete line beyond `_max`, counted not held
        self._last_cr = False  # whether the incomplete line's last byte was `\r`

    @property
    def pending(self) -> int:
        """Number of bytes of the incomplete line held in memory (never above the limit)."""
        return len(self._held)

    @property
    def max_line_bytes(self) -> int:
        return self._max

    def feed(self, data: bytes) -> list[str]:
        """Add `data`; return the lines it completed, in order, without their terminators."""
        view = memoryview(data)
        lines: list[str] = []
        start = 0
        while (newline := data.find(b"\n", start)) != -1:
            self._hold(view[start:newline])
            lines.append(self._take_line())
            start = newline + 1
        self._hold(view[start:])
        return lines

    def _hold(self, part: memoryview) -> None:
        """Append `part` to the incomplete line, keeping at most `_max` bytes of it."""
        if not part:
            return
        room = self._max - len(self._held)
        self._held += part[:room]
        self._dropped += max(0, len(part) - room)
        self._last_cr = part[-1] == 0x0D

    def _take_line(self) -> str:
        """Finish the incomplete line (its `\\n` arrived) and start a new one."""
        held, dropped = self._held, self._dropped
        if self._last_cr:
            # The `\r` of a `\r\n` ending is the last byte received: held or dropped.
            if dropped:
                dropped -= 1
            else:
                del held[-1]
        text = held.decode("utf-8", errors="replace")
        self._held, self._dropped, self._last_cr = bytearray(), 0, False
        return f"{text} …[truncated {dropped} bytes]" if dropped else text
