"""The compiled scanner (anemon/parsing/_scan.c) reads a block as the regular expression and
float() do: which lines are plain, and each value. Sessions built both ways are compared in
tests/analysis/test_columnar.py; here the scanner's own contract, line by line."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.parsing import columnar

KEYS = ("arm", "t", "gen", "thermal", "note")
"""Text, number, number (an int key), text, and an unknown key (checked only)."""
CHARS = "ATRIL aert=gn0123456789._+-eEinfINFx\t é"
"""Enough of the alphabet to build plain lines, near misses and values float() refuses."""


def test_the_install_built_the_scanner():
    """`pip install -e .` compiles anemon/parsing/_scan.c. The build is optional (without a
    compiler the install still works, with the regular expression), so a broken build shows
    here, not at install time."""
    assert columnar._scan is not None


def _both(lines: list[str]) -> tuple[object, object]:
    skeleton = columnar.Skeleton(KEYS)
    scanned = columnar._columns(skeleton, lines)
    matched = columnar._matched_columns(skeleton, lines)
    assert scanned is not None and matched is not None
    return _comparable(scanned), _comparable(matched, read=True)


def _comparable(split: tuple[bytes, dict[str, object]], *, read: bool = False) -> object:
    """Per plain line, each value as the columnar path reads it (a number's bits, a text)."""
    flags, columns = split
    rows = []
    for index, plain in enumerate(flags):
        if not plain:
            rows.append(None)
            continue
        row = []
        for key in ("arm", "t", "gen", "thermal"):
            value = columns[key][index]  # type: ignore[index]
            if key in ("t", "gen"):
                number = _float(value) if read else float(value)
                value = "refused" if number is None else np.float64(number).tobytes()
            row.append(value)
        rows.append(tuple(row))
    return bytes(flags), rows


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _scanned_refusals_are_not_plain(scanned: object, matched: object) -> object:
    """The regular expression calls a line with a value float() refuses plain (the value is
    refused later, and the line read one by one); the scanner says so at once: not plain."""
    flags, rows = matched  # type: ignore[misc]
    out = bytearray(flags)
    kept = []
    for index, row in enumerate(rows):
        if row is not None and "refused" in row:
            out[index] = 0
            row = None
        kept.append(row)
    return bytes(out), kept


def test_plain_lines_and_near_misses():
    lines = [
        "TRIAL arm=a t=1.5 gen=256 thermal=fair note=x",
        "TRIAL arm=a t=1.5 gen=256 thermal=fair note=x ",  # a space after
        "TRIAL arm=a t=1.5 gen=256 thermal=fair",  # a key short
        "TRIAL arm=a  t=1.5 gen=256 thermal=fair note=x",  # two spaces
        "TRIAL arm=a t=1.5 gen=256 thermal=fair note=é",  # not ASCII
        "TRIAL arm=a t=1e999 gen=-0 thermal=0 note=",  # overflow reads as inf, as float() does
        "TRIAL arm= t=nan gen=+1 thermal= note=",
        "TRIAL arm=a t=1_0 gen=2 thermal=x note=y",  # float() reads 1_0; the per-line path does
        "TRIAL arm=a t=x gen=2 thermal=x note=y",
        "trial arm=a t=1 gen=2 thermal=x note=y",
        "",
        "TRIAL arm=a t=" + "1" * 80 + " gen=2 thermal=x note=y",  # long: read one by one
    ]
    scanned, matched = _both(lines)
    flags = scanned[0]  # type: ignore[index]
    assert list(flags) == [1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
    rows = scanned[1]  # type: ignore[index]
    assert rows[5][1] == np.float64(math.inf).tobytes()
    assert rows[5][2] == np.float64(-0.0).tobytes()
    matched_flags = matched[0]  # type: ignore[index]
    # where they differ, the scanner hands a line the regular expression would take back
    assert all(s <= m for s, m in zip(flags, matched_flags, strict=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(CHARS, max_size=12), min_size=len(KEYS), max_size=len(KEYS)))
def test_any_values_split_the_same(values: list[str]):
    """Lines built from random values (plain, near-plain, refused by float()): the scanner
    gives what the regular expression and float() give, a refused value making the line not
    plain; a line the regular expression refuses for other reasons is not plain either."""
    words = " ".join(f"{key}={value}" for key, value in zip(KEYS, values, strict=True))
    lines = [f"TRIAL {words}", "TRIAL arm=a t=1 gen=2 thermal=x note=y", f"TRIAL  {words}"]
    scanned, matched = _both(lines)
    expected = _scanned_refusals_are_not_plain(scanned, matched)
    if "_" in values[1] or "_" in values[2]:  # float() reads "1_0": the scanner hands it back
        flags, rows = expected  # type: ignore[misc]
        expected = (b"\x00" + flags[1:], [None, *rows[1:]])
    assert scanned == expected


DECIMAL = st.builds(
    lambda sign, whole, point, fraction: f"{sign}{whole}{point}{fraction}",
    st.sampled_from(("", "-", "+")),
    st.text("0123456789", max_size=20),
    st.sampled_from(("", ".")),
    st.text("0123456789", max_size=26),
)
"""Decimals of every length around the scanner's fast path (15 digits, 22 after the point)."""


@settings(max_examples=500, deadline=None)
@given(st.lists(DECIMAL | st.floats().map(repr), min_size=1, max_size=20))
def test_numbers_read_as_float_reads_them(texts: list[str]):
    """Each number the scanner reads is float()'s, to the bit; a text float() refuses makes
    its line not plain."""
    assert columnar._scan is not None
    lines = [f"TRIAL t={text}" for text in texts]
    flags, (column,) = columnar._scan(lines, (b"t",), bytes([columnar._NUMBER]))
    assert isinstance(column, bytes)
    numbers = np.frombuffer(column, dtype=float)
    for text, plain, number in zip(texts, flags, numbers, strict=True):
        expected = _float(text)
        assert plain == (expected is not None)
        if expected is not None and expected == expected:
            assert np.float64(expected).tobytes() == number.tobytes()
        elif expected is not None:
            assert number != number
