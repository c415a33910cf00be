"""LineAssembler: complete lines only, any chunking, bounded memory."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.sources.lines import LineAssembler


def feed_all(assembler: LineAssembler, chunks: list[bytes]) -> list[str]:
    return [line for chunk in chunks for line in assembler.feed(chunk)]


def test_lines_split_across_chunks_are_joined() -> None:
    assembler = LineAssembler()
    chunks = [b"STA", b"RT arm=a\nTRI", b"AL trial=0\n", b"", b"\nEND\n"]
    assert feed_all(assembler, chunks) == ["START arm=a", "TRIAL trial=0", "", "END"]
    assert assembler.pending == 0


MIXED = "a=1\r\nb=é\n\nc=ü€\r\n".encode()


@pytest.mark.parametrize("cut", range(len(MIXED) + 1))
def test_every_split_point_gives_the_same_lines(cut: int) -> None:
    assembler = LineAssembler()
    assert feed_all(assembler, [MIXED[:cut], MIXED[cut:]]) == ["a=1", "b=é", "", "c=ü€"]
    assert assembler.pending == 0


def test_crlf_is_one_ending_even_split_across_chunks() -> None:
    assembler = LineAssembler()
    assert assembler.feed(b"one\r\ntwo\r") == ["one", "two"]  # a lone CR ends its line
    assert assembler.feed(b"\nthree\rx\n") == ["three", "x"]  # that LF closed "two\r\n"
    assert assembler.pending == 0


def test_invalid_utf8_is_replaced_never_raised() -> None:
    assembler = LineAssembler()
    assert assembler.feed(b"ok \xff\xfe bad\n\xc3\n") == ["ok \ufffd\ufffd bad", "\ufffd"]


def test_a_partial_line_is_held_until_its_newline() -> None:
    assembler = LineAssembler()
    assert assembler.feed(b"done\nhalf a li") == ["done"]
    assert assembler.pending == len(b"half a li")
    assert assembler.feed(b"ne") == []
    assert assembler.feed(b"\n") == ["half a line"]
    assert assembler.pending == 0


def test_a_long_line_is_truncated_with_a_marker() -> None:
    assembler = LineAssembler(max_line_bytes=4)
    assert assembler.feed(b"abcdefgh\nok\n") == ["abcd …[truncated 4 bytes]", "ok"]


def test_the_cr_of_a_truncated_line_is_not_counted() -> None:
    assembler = LineAssembler(max_line_bytes=4)
    assert assembler.feed(b"abcd\r\nabcde\r\n") == ["abcd", "abcd …[truncated 1 bytes]"]


def test_a_10mb_line_is_truncated_with_bounded_memory() -> None:
    limit = 1 << 20
    assembler = LineAssembler()
    chunk = b"x" * 65536
    total = 10 * 1024 * 1024
    lines: list[str] = []
    tracemalloc.start()
    try:
        for _ in range(total // len(chunk)):
            lines += assembler.feed(chunk)
            assert assembler.pending <= limit
        lines += assembler.feed(b"\nnext\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines == ["x" * limit + f" …[truncated {total - limit} bytes]", "next"]
    # The held 1 MiB, its decoded text and the marked copy: a few MiB, not the 10 MB fed.
    assert peak < 5 * limit


def test_max_line_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError):
        LineAssembler(max_line_bytes=0)


# -- hostile input: CR-only endings, NUL bytes, a byte-order mark ------------------------------


def test_cr_only_endings_split_lines() -> None:
    assembler = LineAssembler()
    assert assembler.feed(b"START arm=a\rTRIAL trial=0\rTRIAL trial=1\r") == [
        "START arm=a",
        "TRIAL trial=0",
        "TRIAL trial=1",
    ]
    assert assembler.feed(b"END\r") == ["END"]  # no LF came: no empty line either


def test_a_cr_at_a_chunk_end_then_a_lone_cr_gives_one_empty_line() -> None:
    assembler = LineAssembler()
    assert assembler.feed(b"a\r") == ["a"]
    assert assembler.feed(b"\rb\n") == ["", "b"]  # CR CR: an empty line between


def test_nul_bytes_are_kept_as_data() -> None:
    assert LineAssembler().feed(b"TRIAL arm=\0a\0\nnext\n") == ["TRIAL arm=\x00a\x00", "next"]


def test_a_leading_bom_is_dropped_only_at_the_start() -> None:
    assembler = LineAssembler()
    assert assembler.feed(b"\xef\xbb") == []
    assert assembler.feed(b"\xbfSTART arm=a\n\xef\xbb\xbfx\n") == ["START arm=a", "\ufeffx"]


def test_finish_gives_the_incomplete_last_line() -> None:
    assembler = LineAssembler(max_line_bytes=4)
    assert assembler.feed_counted(b"ok\nabcdef") == [("ok", 0)]
    assert assembler.finish() == ("abcd …[truncated 2 bytes]", 2)
    assert assembler.finish() is None


def reference_lines(data: bytes) -> list[str]:
    """What any chunking must give: every ending splits, the unfinished rest is held."""
    body = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    *complete, _rest = body.split(b"\n")
    return [line.decode("utf-8", errors="replace") for line in complete]


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=60).map(lambda b: b.replace(b"\xef\xbb\xbf", b"")),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=6),
)
def test_any_chunking_of_mixed_endings_gives_the_same_lines(data: bytes, cuts: list[int]) -> None:
    data = data.replace(b"\x00", b"\r")  # plenty of CRs next to LFs and to chunk edges
    if data.endswith(b"\r"):
        data += b"x"  # a final CR may still get its LF: the reference cannot know
    points = sorted({min(cut, len(data)) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assembler = LineAssembler()
    assert [line for chunk in chunks for line in assembler.feed(chunk)] == reference_lines(data)
