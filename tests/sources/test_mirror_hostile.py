"""MirrorTailer against a hostile mirror: unreadable, a directory, a FIFO, a symlink swapped
to another log and back. Every state is a gap or a reset, never an exception, and every line
is delivered exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.sources import mirror as mirror_module
from anemon.sources.items import LogGap, LogItem, LogReset
from anemon.sources.mirror import EARLIER_LOGS, MirrorTailer
from tests.sources.test_mirror import append, atomic_write, make_log, texts


def gaps(items: list[LogItem]) -> list[LogGap]:
    return [item for item in items if isinstance(item, LogGap)]


def swap_link(path: Path, target: Path) -> None:
    """Point the symlink `path` at `target` atomically (a new link renamed over it)."""
    link = path.with_name(path.name + ".link")
    link.symlink_to(target)
    os.replace(link, path)


def make_absent(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "bench.log"


def test_a_mirror_that_becomes_a_directory_is_a_gap_then_read_on(log_path: Path) -> None:
    data, lines = make_log("a", 10)
    cut = data.index(b"TRIAL trial=4")
    log_path.write_bytes(data[:cut])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:4]
    log_path.unlink()
    log_path.mkdir()
    assert tailer.check() == [LogGap("begin", "the mirror is a directory, not a file")]
    assert tailer.check() == []  # one gap, however many checks
    assert tailer.unreachable is not None
    log_path.rmdir()
    log_path.write_bytes(data)
    items = tailer.check()
    assert gaps(items) == [items[0]] and items[0].state == "end"
    assert texts(items) == lines[4:]
    assert tailer.unreachable is None


def test_an_unreadable_mirror_is_a_gap(log_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, lines = make_log("a", 6)
    log_path.write_bytes(data[: data.index(b"TRIAL trial=3")])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:3]
    real_open = os.open

    def denied(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == log_path:  # as chmod 000 would, for anyone but root
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(mirror_module.os, "open", denied)
    append(log_path, data[data.index(b"TRIAL trial=3") :])
    assert tailer.check() == [LogGap("begin", "the mirror is not readable (permission denied)")]
    assert tailer.check() == []
    monkeypatch.undo()
    items = tailer.check()
    assert isinstance(items[0], LogGap) and items[0].state == "end"
    assert texts(items) == lines[3:]


def test_a_read_error_mid_read_is_a_gap_and_loses_nothing(
    log_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, lines = make_log("a", 6)
    log_path.write_bytes(data[: data.index(b"TRIAL trial=2")])
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines[:2]
    append(log_path, data[data.index(b"TRIAL trial=2") :])
    real_fdopen = os.fdopen

    class Failing:
        def __init__(self, file: object) -> None:
            self._file = file

        def __enter__(self) -> Failing:
            return self

        def __exit__(self, *exc: object) -> None:
            self._file.close()  # type: ignore[attr-defined]

        def fileno(self) -> int:
            return self._file.fileno()  # type: ignore[attr-defined, no-any-return]

        def seek(self, position: int) -> int:
            return self._file.seek(position)  # type: ignore[attr-defined, no-any-return]

        def read(self, length: int) -> bytes:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(mirror_module.os, "fdopen", lambda *a, **k: Failing(real_fdopen(*a, **k)))
    assert tailer.check() == [LogGap("begin", "the mirror cannot be read (Input/output error)")]
    monkeypatch.undo()
    items = tailer.check()
    assert gaps(items) == [items[0]] and texts(items) == lines[2:]


def test_a_fifo_in_place_of_the_mirror_is_a_gap_not_a_hang(log_path: Path) -> None:
    data, lines = make_log("a", 4)
    log_path.write_bytes(data)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == lines
    log_path.unlink()
    os.mkfifo(log_path)  # opening it for reading would wait for a writer
    assert tailer.check() == [LogGap("begin", "the mirror is a FIFO, not a file")]
    log_path.unlink()
    log_path.write_bytes(data)
    assert [item for item in tailer.check() if not isinstance(item, LogGap)] == []


def test_a_dangling_symlink_is_a_missing_file(tmp_path: Path, log_path: Path) -> None:
    log_path.symlink_to(tmp_path / "nowhere.log")
    tailer = MirrorTailer(log_path)
    assert tailer.check() == []
    assert tailer.missing and tailer.unreachable is None


def test_a_symlink_swapped_to_another_log_and_back_reads_each_line_once(
    tmp_path: Path, log_path: Path
) -> None:
    a_data, a_lines = make_log("a", 30)
    b_data, b_lines = make_log("b", 20)
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(a_data[: a_data.index(b"TRIAL trial=10")])
    b.write_bytes(b_data[: b_data.index(b"TRIAL trial=5")])
    swap_link(log_path, a)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == a_lines[:10]
    swap_link(log_path, b)
    assert tailer.check() == [LogReset("the start of the file changed"), *b_lines[:5]]
    a.write_bytes(a_data)  # a grew while the link pointed at b
    swap_link(log_path, a)
    items = tailer.check()
    where = a_data.index(b"TRIAL trial=10")
    assert items[0] == LogReset(f"an earlier log is back: read on from byte {where}")
    assert texts(items) == a_lines[10:]
    b.write_bytes(b_data)
    swap_link(log_path, b)
    assert texts(tailer.check()) == b_lines[5:]


def test_an_earlier_log_back_mid_rewrite_is_waited_for(tmp_path: Path, log_path: Path) -> None:
    a_data, a_lines = make_log("a", 30)
    b_data, b_lines = make_log("b", 5)
    log_path.write_bytes(a_data)
    tailer = MirrorTailer(log_path)
    assert tailer.check() == a_lines
    atomic_write(log_path, b_data)
    assert texts(tailer.check()) == b_lines
    atomic_write(log_path, a_data[:300])  # a, being rewritten: a prefix of what was read
    assert texts(tailer.check()) == []
    append(log_path, a_data[300:])
    assert tailer.check() == []  # a, whole again: nothing new in it


def test_only_the_last_logs_are_remembered(log_path: Path) -> None:
    logs = [make_log(f"arm{i}", 3) for i in range(EARLIER_LOGS + 2)]
    tailer = MirrorTailer(log_path)
    for data, lines in logs:
        atomic_write(log_path, data)
        assert texts(tailer.check()) == lines
    atomic_write(log_path, logs[-2][0])  # remembered: nothing again
    assert texts(tailer.check()) == []
    atomic_write(log_path, logs[0][0])  # forgotten: read as a new log
    assert texts(tailer.check()) == logs[0][1]


async def test_follow_goes_on_through_a_directory_and_back(log_path: Path) -> None:
    data, lines = make_log("a", 12)
    cut = data.index(b"TRIAL trial=6")
    log_path.write_bytes(data[:cut])
    stop = asyncio.Event()
    items: list[LogItem] = []
    tailer = MirrorTailer(log_path, poll_s=0.05)
    async with asyncio.timeout(10), contextlib.aclosing(tailer.follow(stop)) as batches:
        async for batch in batches:
            items += batch
            if texts(items) == lines[:6] and not gaps(items):
                log_path.unlink()
                log_path.mkdir()
            elif len(gaps(items)) == 1:
                log_path.rmdir()
                log_path.write_bytes(data)
            if len(texts(items)) >= len(lines):
                break
    assert [gap.state for gap in gaps(items)] == ["begin", "end"]
    assert texts(items) == lines


# -- the property: any sequence of hostile operations, every line exactly once -----------------

OPERATIONS = (
    "append",  # the log the path shows grows (through the symlink, or in the file)
    "truncate_rewrite",  # cut to a prefix, a check, then rewritten longer
    "refresh",  # replaced atomically by a longer copy of the log it shows
    "delete",
    "directory",
    "swap",  # a symlink to the other log (which may have grown meanwhile)
    "restore",  # a symlink to either log, or a copy of it, where nothing readable is
    "grow_other",  # the log not shown grows
)


class Hostile:
    """Two logs, each only ever growing as a prefix of its full text, and a path that shows
    one of them (a symlink or a copy), or nothing, or a directory."""

    def __init__(self, root: Path, fulls: dict[str, bytes]) -> None:
        self.root, self.path, self.fulls = root, root / "bench.log", fulls
        self.length = {name: len(full.split(b"\n", 1)[0]) + 1 for name, full in fulls.items()}
        for name in fulls:
            self.store(name).write_bytes(self.content(name))
        self.shown: str | None = "a"
        self.linked = True
        swap_link(self.path, self.store("a"))

    def store(self, name: str) -> Path:
        return self.root / f"{name}.store"

    def content(self, name: str) -> bytes:
        return self.fulls[name][: self.length[name]]

    def grow(self, name: str, by: int) -> None:
        self.length[name] = min(len(self.fulls[name]), self.length[name] + by)
        self.store(name).write_bytes(self.content(name))
        if self.shown == name and not self.linked:
            atomic_write(self.path, self.content(name))

    def show(self, name: str, linked: bool) -> None:
        make_absent(self.path)
        if linked:
            swap_link(self.path, self.store(name))
        else:
            self.path.write_bytes(self.content(name))
        self.shown, self.linked = name, linked

    def apply(self, operation: str, amount: int, pick: bool, check: object) -> None:
        other = {"a": "b", "b": "a"}[self.shown or "a"]
        if operation == "append" and self.shown:
            self.grow(self.shown, amount)
        elif operation == "truncate_rewrite" and self.shown:
            name = self.shown
            cut = amount % (self.length[name] + 1)
            with open(self.path, "r+b") as file:  # through the symlink: the log itself
                file.truncate(cut)
            check()  # type: ignore[operator]
            self.grow(name, amount)
            with open(self.path, "r+b") as file:
                file.write(self.content(name))
        elif operation == "refresh" and self.shown:
            self.length[self.shown] = min(
                len(self.fulls[self.shown]), self.length[self.shown] + amount
            )
            self.store(self.shown).write_bytes(self.content(self.shown))
            atomic_write(self.path.with_name("bench.log"), self.content(self.shown))
            self.linked = False
        elif operation == "delete":
            make_absent(self.path)
            self.shown = None
        elif operation == "directory":
            make_absent(self.path)
            self.path.mkdir()
            self.shown = None
        elif operation == "swap":
            self.show(other, linked=True)
        elif operation == "restore" and self.shown is None:
            self.show("a" if pick else "b", linked=amount % 2 == 0)
        elif operation == "grow_other":
            self.grow(other, amount)


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(OPERATIONS),
            st.integers(min_value=0, max_value=900),
            st.booleans(),
            st.booleans(),
        ),
        max_size=30,
    )
)
def test_any_hostile_sequence_delivers_every_line_exactly_once(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, bool, bool]]
) -> None:
    root = tmp_path_factory.mktemp("hostile")
    fulls = {name: make_log(name, 60)[0] for name in ("a", "b")}
    world = Hostile(root, fulls)
    tailer = MirrorTailer(world.path)
    emitted: list[LogItem] = []

    def check() -> None:
        emitted.extend(tailer.check())

    for operation, amount, pick, probe in steps:
        world.apply(operation, amount, pick, check)
        if probe:
            check()
    for name in ("a", "b"):  # at the end each log, whole, is shown once more
        world.length[name] = len(fulls[name])
        world.show(name, linked=True)
        world.grow(name, 0)
        check()
    lines = texts(emitted)
    expected = make_log("a", 60)[1] + make_log("b", 60)[1]
    assert sorted(lines) == sorted(expected)  # each line once: none lost, none twice
    states = [gap.state for gap in gaps(emitted)]
    assert states == ["begin", "end"] * (len(states) // 2)  # gaps open and close in turn
