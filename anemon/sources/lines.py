"""Turn a stream of byte chunks into complete text lines (line-protocol.md, "Lines").

Independent of files on purpose: the mirror tailer feeds it what it reads past its offset,
device backends feed it raw chunks (AFC partial reads, console streams) as they arrive, and
the SOURCE reader feeds it a file (or a pipe, or a gzip stream) chunk by chunk.
"""

from __future__ import annotations

import re

DEFAULT_MAX_LINE_BYTES = 1 << 20  # 1 MiB: far beyond any real record, small enough to hold
BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte-order mark: dropped at the start of a stream so the first line parses."""
ENDING = re.compile(rb"\r\n|\r|\n")
"""A line's ending: LF, CRLF (one ending) or a lone CR."""


class LineAssembler:
    """Split fed bytes into complete lines; keep the incomplete tail for the next `feed`.

    A line ends at `\\n`, `\\r\\n` (one ending) or a lone `\\r` (old Mac logs, progress-style
    output); the ending is stripped. A `\\r` at the end of a chunk ends its line at once, and
    a `\\n` starting the next chunk is then taken as the rest of that `\\r\\n`, not as an
    empty line. A UTF-8 byte-order mark at the very start is dropped. Text is decoded as
    UTF-8 with replacement characters, so decoding never raises (and a multi-byte character
    split across chunks is decoded whole, since only complete lines are decoded); NUL bytes
    are kept as data. A line longer than `max_line_bytes` keeps its first `max_line_bytes`
    bytes, counts the rest without holding them, and is emitted with a
    ` …[truncated N bytes]` marker when it ends: memory stays bounded.
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self._max = max_line_bytes
        self._held = bytearray()  # start of the incomplete line, at most `_max` bytes
        self._dropped = 0  # bytes of the incomplete line beyond `_max`, counted not held
        self._after_cr = False  # the last chunk ended a line with `\r`: a `\n` may follow
        self._at_start = True  # no line taken yet: a BOM may lead the first one

    @property
    def pending(self) -> int:
        """Number of bytes of the incomplete line held in memory (never above the limit)."""
        return len(self._held)

    @property
    def max_line_bytes(self) -> int:
        return self._max

    def feed(self, data: bytes) -> list[str]:
        """Add `data`; return the lines it completed, in order, without their terminators."""
        return self.feed_lines(data)[0]

    def feed_counted(self, data: bytes) -> list[tuple[str, int]]:
        """As `feed`, each line with the number of bytes cut off it (0: kept whole)."""
        lines, cuts = self.feed_lines(data)
        return [(text, cuts.get(index, 0)) for index, text in enumerate(lines)]

    def feed_lines(self, data: bytes) -> tuple[list[str], dict[int, int]]:
        """As `feed`, and the lines cut short: their index in the list -> the bytes cut off
        (a whole file's lines come as one list, with no work per line in Python)."""
        lines: list[str] = []
        cuts: dict[int, int] = {}
        if not data:
            return lines, cuts
        if self._after_cr:
            self._after_cr = False
            if data[:1] == b"\n":
                data = data[1:]  # the `\n` of a `\r\n` split across chunks
        if b"\r" not in data and len(data) <= self._max:
            self._plain(data, lines, cuts)
            return lines, cuts
        parts = ENDING.split(data) if b"\r" in data else data.split(b"\n")
        if len(parts) > 1 and data.endswith(b"\r"):
            self._after_cr = True
        if len(parts) > 1:
            self._hold(parts[0])
            self._take_into(lines, cuts)
            self._whole(parts[1:-1], lines, cuts)
        self._hold(parts[-1])
        return lines, cuts

    def _plain(self, data: bytes, lines: list[str], cuts: dict[int, int]) -> None:
        """`feed_lines` of data with only `\n` endings and no line in it too long: the lines
        between its first and last `\n` decoded and split as one block, not split as bytes."""
        first = data.find(b"\n")
        if first < 0:
            self._hold(data)
            return
        self._hold(data[:first])
        self._take_into(lines, cuts)
        last = data.rfind(b"\n")
        if last > first:  # `\n` is never inside a UTF-8 sequence: one decode replaces alike
            lines += data[first + 1 : last].decode("utf-8", "replace").split("\n")
        self._hold(data[last + 1 :])

    def _whole(self, parts: list[bytes], lines: list[str], cuts: dict[int, int]) -> None:
        """Complete lines with nothing held before them: decoded as one block (a whole file is
        read at C speed, not line by line) unless one is too long and must be cut."""
        if not parts:
            return
        if max(map(len, parts)) > self._max:
            for part in parts:
                self._hold(part)
                self._take_into(lines, cuts)
            return
        # `\n` is never inside a UTF-8 sequence, so decoding the joined block replaces exactly
        # what decoding each line would
        lines += b"\n".join(parts).decode("utf-8", "replace").split("\n")

    def _take_into(self, lines: list[str], cuts: dict[int, int]) -> None:
        text, cut = self._take_line()
        if cut:
            cuts[len(lines)] = cut
        lines.append(text)

    def drop_incomplete(self) -> None:
        """Forget the incomplete line: its bytes will be fed again (a log that changed under
        it, read on from its last complete line). A `\n` may still end a `\r` fed before."""
        self._held, self._dropped = bytearray(), 0

    def finish(self) -> tuple[str, int] | None:
        """The incomplete last line (its ending never came: end of file), or None if none;
        the assembler starts over empty."""
        if not self._held and not self._dropped:
            return None
        return self._take_line()

    def _hold(self, part: bytes) -> None:
        """Append `part` to the incomplete line, keeping at most `_max` bytes of it."""
        if not part:
            return
        room = self._max - len(self._held)
        self._held += part[:room]
        self._dropped += max(0, len(part) - room)

    def _take_line(self) -> tuple[str, int]:
        """Finish the incomplete line (its ending arrived) and start a new one."""
        held, dropped = self._held, self._dropped
        if self._at_start:
            self._at_start = False
            if held.startswith(BOM):
                del held[: len(BOM)]
        text = held.decode("utf-8", errors="replace")
        self._held, self._dropped = bytearray(), 0
        return (f"{text} …[truncated {dropped} bytes]", dropped) if dropped else (text, 0)
