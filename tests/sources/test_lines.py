"""LineAssembler: complete lines only, any chunking, bounded memory."""

from __future__ import annotations

import tracemalloc

import pytest

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


def test_crlf_is_stripped_but_a_lone_cr_is_kept() -> None:
    assembler = LineAssembler()
    assert assembler.feed(b"one\r\ntwo\r") == ["one"]
    assert assembler.feed(b"\nthree\rx\n") == ["two", "three\rx"]


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
