"""An NSKeyedArchiver payload read lazily: only the objects asked for are decoded.

A sysmontap row lists every process the phone runs (some 250-400 on an iPhone), every
interval; decoding it whole (what pymobiledevice3 does with every DTX payload, through
bpylist2 and plistlib's pure-Python binary reader) costs milliseconds a second of the host's
CPU for the one process anemon follows. Here the binary plist's offset table is read once and
an object is decoded when it is reached: the row's keys, the process table's pids, the
followed process's values.

The format: a binary plist (`bplist00`: objects, an offset table, a 32-byte trailer) whose top
dictionary holds `$objects` (every archived object; index 0 is `$null`) and `$top` (`root`: a
UID into `$objects`). An archived NSArray is a dictionary with `NS.objects` (UIDs); an
NSDictionary has `NS.keys` and `NS.objects`. Anything this reader cannot follow raises
`Unreadable`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

TRAILER = struct.Struct(">6xBBQQQ")
NULL = "$null"
_WIDTHS = {1: "B", 2: "H", 4: "L", 8: "Q"}


class Unreadable(ValueError):
    """A payload that is not an NSKeyedArchiver binary plist this reader can follow."""


DAMAGE = (IndexError, KeyError, TypeError, struct.error, UnicodeDecodeError)
"""What following a damaged payload's references can raise besides Unreadable: each says the
payload is unreadable too."""


class Uid(int):
    """An archive reference (a binary plist UID): an index into `$objects`."""


class Plist:
    """A binary plist's objects, each decoded when asked for (by its object reference)."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(b"bplist00") or len(data) < 8 + TRAILER.size:
            raise Unreadable("not a binary plist")
        self.data = data
        offset_size, self.ref_size, count, self.top, table = TRAILER.unpack_from(
            data, len(data) - 32
        )
        self.offsets = _ints(data, table, offset_size, count)

    def refs(self, ref: int, kind: int) -> tuple[int, ...]:
        """The object references of the array (`kind` 0xA) or dictionary (0xD) at `ref`: a
        dictionary's keys, then its values."""
        marker, start, count = self._head(ref)
        if marker != kind:
            raise Unreadable(f"object {ref} is not a{' dictionary' if kind == 0xD else 'n array'}")
        return _ints(self.data, start, self.ref_size, count * (2 if kind == 0xD else 1))

    def scalar(self, ref: int) -> Any:
        """The number, string, UID, boolean or None at `ref`."""
        offset = self._offset(ref)
        data = self.data
        marker = data[offset]
        kind, info = marker >> 4, marker & 0xF
        if marker == 0x00:
            return None
        if marker in (0x08, 0x09):
            return marker == 0x09
        if kind == 0x1:
            size = 1 << info
            return int.from_bytes(data[offset + 1 : offset + 1 + size], "big", signed=size >= 8)
        if kind == 0x2 and info in (2, 3):
            return struct.unpack_from(">f" if info == 2 else ">d", data, offset + 1)[0]
        if kind == 0x8:
            return Uid.from_bytes(data[offset + 1 : offset + 2 + info], "big")
        if kind in (0x5, 0x6):
            _, start, count = self._head(ref)
            if kind == 0x5:
                return data[start : start + count].decode("ascii")
            return data[start : start + 2 * count].decode("utf-16-be")
        raise Unreadable(f"object {ref} has marker {marker:#04x}, not a scalar")

    def _offset(self, ref: int) -> int:
        try:
            offset = self.offsets[ref]
        except IndexError:
            raise Unreadable(f"object {ref} is not in the offset table") from None
        if offset >= len(self.data):
            raise Unreadable(f"object {ref} lies past the end")
        return offset

    def _head(self, ref: int) -> tuple[int, int, int]:
        """A sized object's kind, where its body starts, and its count (inline, or an integer
        object after the marker when the low nibble is 0xF)."""
        offset = self._offset(ref)
        marker = self.data[offset]
        kind, count, start = marker >> 4, marker & 0xF, offset + 1
        if count == 0xF:
            size_marker = self.data[start]
            if size_marker >> 4 != 0x1:
                raise Unreadable(f"object {ref} has a bad count")
            width = 1 << (size_marker & 0xF)
            count = int.from_bytes(self.data[start + 1 : start + 1 + width], "big")
            start += 1 + width
        return kind, start, count


class KeyedArchive:
    """An NSKeyedArchiver payload: `root` and the objects reached from it, decoded on demand."""

    def __init__(self, data: bytes) -> None:
        self.plist = plist = Plist(data)
        top = self._strings_to_refs(plist.top)
        self.objects = plist.refs(top["$objects"], 0xA)
        self.root = self._uid(self._strings_to_refs(top["$top"])["root"])

    def value(self, uid: int) -> Any:
        """The scalar archived at `uid` (`$null` is None)."""
        value = self.plist.scalar(self._ref(uid))
        return None if value == NULL else value

    def fields(self, uid: int) -> dict[str, int]:
        """An archived object's fields (its keys, each with its value's plist reference)."""
        return self._strings_to_refs(self._ref(uid))

    def uids(self, ref: int) -> Iterator[Uid]:
        """The UIDs of the plist array at `ref` (an `NS.objects` or `NS.keys`)."""
        return (self._uid(item) for item in self.plist.refs(ref, 0xA))

    def uid_at(self, ref: int, index: int) -> Uid:
        """The `index`th UID of the plist array at `ref`, the others left unread."""
        return self._uid(self.plist.refs(ref, 0xA)[index])

    def _uid(self, ref: int) -> Uid:
        uid = self.plist.scalar(ref)
        if not isinstance(uid, Uid):
            raise Unreadable(f"object {ref} is not a UID")
        return uid

    def _ref(self, uid: int) -> int:
        try:
            return self.objects[uid]
        except IndexError:
            raise Unreadable(f"UID {uid} is not in $objects") from None

    def _strings_to_refs(self, ref: int) -> dict[str, int]:
        plist = self.plist
        refs = plist.refs(ref, 0xD)
        half = len(refs) // 2
        return {
            str(plist.scalar(key)): value
            for key, value in zip(refs[:half], refs[half:], strict=True)
        }


def _ints(data: bytes, start: int, width: int, count: int) -> tuple[int, ...]:
    """`count` big-endian unsigned integers of `width` bytes from `start`."""
    end = start + width * count
    if width < 1 or end > len(data):
        raise Unreadable("a table runs past the end")
    code = _WIDTHS.get(width)
    if code is not None:
        return struct.unpack_from(f">{count}{code}", data, start)
    return tuple(int.from_bytes(data[i : i + width], "big") for i in range(start, end, width))
