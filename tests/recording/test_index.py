"""The session index: a recording's entry from its header and its last line only."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anemon.recording.index import (
    SessionsError,
    build_index,
    entry_json,
    last_line,
    last_summary,
    read_entry,
)
from tests.recording.helpers import make_recording


def test_an_entry_has_the_summary_facts(tmp_path):
    entry = read_entry(make_recording(tmp_path / "a.jsonl", tag="t1", os_build="22B83"))
    assert entry.summarized and entry.note is None and entry.version == 2
    assert (entry.tag, entry.os_build, entry.device, entry.status) == (
        "t1", "22B83", "Lab iPhone", "done"
    )  # fmt: skip
    assert [a.name for a in entry.arms] == ["ane_arm", "gpu_arm"]
    assert entry.trials == 6  # 3 timed trials per arm; the warm-ups do not count
    assert all(a.j_per_token is None or a.j_per_token > 0 for a in entry.arms)
    assert entry.created is not None and entry.created.year == 2026


def test_the_middle_of_a_recording_is_never_read(tmp_path):
    """Garbage between the header and the summary (not JSON, not UTF-8, NUL bytes, 3 MB of it)
    changes nothing: only the first and the last lines are read."""
    path = make_recording(tmp_path / "big.jsonl")
    text = path.read_bytes().splitlines(keepends=True)
    garbage = b"\x00\xff not json {{{\n" * 200_000
    path.write_bytes(text[0] + garbage + text[-1])
    clean = read_entry(make_recording(tmp_path / "clean.jsonl"))
    entry = read_entry(path)
    assert entry.summarized and (entry.trials, entry.arms) == (clean.trials, clean.arms)


def test_a_killed_session_has_no_summary_and_says_what_to_run(tmp_path):
    path = make_recording(tmp_path / "killed.jsonl", summary=False, os_build="22A100")
    with path.open("a") as f:
        f.write('{"kind": "trial", "t": 99, "wa')  # torn mid-write
    entry = read_entry(path)
    assert not entry.summarized and entry.status is None and entry.arms == ()
    assert entry.note == f"the session did not close: no summary: run `anemon summary {path}`"
    assert entry.tag == "sustain" and entry.device == "Lab iPhone"
    assert entry.os_build == "18.0"  # the header's device: the START lines were not read


def test_a_version_1_recording_says_so(tmp_path):
    entry = read_entry(make_recording(tmp_path / "v1.jsonl", version=1, summary=False))
    assert entry.version == 1 and entry.note is not None
    assert entry.note.startswith("version 1: no summary: run `anemon summary ")


def test_a_compressed_recording_is_listed_from_its_header(tmp_path):
    plain = make_recording(tmp_path / "a.jsonl")
    packed = tmp_path / "a.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    entry = read_entry(packed)
    assert entry.tag == "sustain" and not entry.summarized
    assert entry.note is not None and entry.note.startswith("compressed: no summary")


def test_the_index_sorts_by_date_and_warns_when_the_os_build_changed(tmp_path):
    make_recording(tmp_path / "b.jsonl", os_build="22B83", created="2026-02-01T09:00:00+00:00")
    make_recording(tmp_path / "a.jsonl", os_build="22A100", created="2026-01-01T09:00:00+00:00")
    make_recording(tmp_path / "c.jsonl", os_build="22B83", created="2026-03-01T09:00:00+00:00")
    make_recording(tmp_path / "other.jsonl", tag="other", os_build="21A1",
                   created="2026-01-15T09:00:00+00:00")  # fmt: skip
    (tmp_path / "notes.txt").write_text("not a recording")
    (tmp_path / "raw.jsonl").write_text("START arm=a t=0\n")
    index = build_index(tmp_path)
    assert [e.path.name for e in index.entries] == ["a.jsonl", "other.jsonl", "b.jsonl", "c.jsonl"]
    assert [(c.tag, c.before, c.after, c.path.name, c.previous.name) for c in index.changes] == [
        ("sustain", "22A100", "22B83", "b.jsonl", "a.jsonl")
    ]
    assert index.changes[0].message() == (
        "OS build changed 22A100 → 22B83 since the previous session of sustain: "
        "compile caches rebuild after an OS update"
    )
    assert [p.name for p, _ in index.skipped] == ["raw.jsonl"]
    row = entry_json(index.entries[2], index.changes)
    assert row["warnings"] == [index.changes[0].message()] and row["os_build"] == "22B83"


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p / "missing", "no such directory"),
        (lambda p: (p / "file").write_text("x") and p / "file", "not a directory"),
    ],
)
def test_a_bad_directory_is_one_error(tmp_path, make, says):
    with pytest.raises(SessionsError, match=says):
        build_index(make(tmp_path))


def test_a_last_line_past_the_limit_is_not_read(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"head\n" + b"x" * 5000 + b"\n")
    assert last_line(path, limit=100) is None
    assert last_line(path) == b"x" * 5000


def test_a_file_whose_last_line_is_not_a_summary_has_none(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"format": "anemon-recording", "version": 2}\n{"kind": "marker"}\n\n\n')
    assert last_line(path) == b'{"kind": "marker"}'
    assert last_summary(path) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")),
             min_size=1, max_size=30),
    st.sampled_from([b"\n", b"\r\n", b"\n\n", b""]),
    st.integers(min_value=1, max_value=64),
)  # fmt: skip
@example(body=[b"abc", b"\x0b"], end=b"\n", block=1)  # a line of only a vertical tab is blank
def test_last_line_is_the_last_non_blank_line_whatever_the_blocks(
    tmp_path_factory, body, end, block
):
    """Read backwards in blocks of any size, the answer is what reading it all would give."""
    import anemon.recording.index as index

    path: Path = tmp_path_factory.mktemp("lines") / "f"
    path.write_bytes(b"\n".join(body) + end)
    expected = [line.strip() for line in b"\n".join(body).splitlines() if line.strip()]
    saved, index._BLOCK = index._BLOCK, block
    try:
        got = last_line(path)
    finally:
        index._BLOCK = saved
    if expected:
        assert got is not None and got.strip() == expected[-1]
    else:
        assert got is None
