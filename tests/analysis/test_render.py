"""The summary's renderings at any width: the table that drops columns, the per-arm blocks it
folds into when too narrow, control characters escaped everywhere, strict JSON."""

from __future__ import annotations

import dataclasses
import io
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from anemon.analysis import render
from anemon.analysis.summary import ArmSummary, summarize
from anemon.events import EndEvent, ErrorEvent, Event, StartEvent, TrialEvent
from anemon.store import Session


def arm_events(arm: str, first: float, count: int = 4, end: bool = True) -> list[Event]:
    events: list[Event] = [StartEvent(t=first, wall=first, arm=arm)]
    events += [
        TrialEvent(t=first + i + 1, wall=first + i + 1, arm=arm, trial=i + 1, decode_tps=50.0 + i,
                   prompt_tps=1200.0 + i, gen=256, thermal=1 + i // 2, battery=90.0)
        for i in range(count)
    ]  # fmt: skip
    if end:
        events.append(EndEvent(t=first + count + 1, wall=first + count + 1, arm=arm,
                               reason="done", trials=count))  # fmt: skip
    return events


def summaries(*names: str) -> list[ArmSummary]:
    events = [e for k, name in enumerate(names) for e in arm_events(name, 100.0 * k)]
    return summarize(Session.from_events(events))


def printed(renderable: object, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def folded(text: str) -> bool:
    """The per-arm blocks, not the table (which has box-drawing borders)."""
    return "┃" not in text and "│" not in text


LONG = "minicpm5_2b_ane_pal8_longer_name"


@pytest.mark.parametrize("width", [40, 50, 60])
def test_a_narrow_terminal_gets_one_block_per_arm_with_every_figure(width: int) -> None:
    arms = summaries(LONG, "minicpm5_1b_gpu_int8")
    text = printed(render.rich_table(arms, title="runs/a.jsonl"), width)
    assert folded(text)
    lines = [line.rstrip() for line in text.splitlines()]
    assert LONG in lines and "minicpm5_1b_gpu_int8" in lines  # each block titled, whole
    assert "…" not in text and "not shown" not in text
    assert max(len(line) for line in lines) <= width
    flat = " ".join(text.split())
    for row in render.table_rows(arms):
        for name, cell in zip(render.table_columns(arms)[1:], row[1:], strict=True):
            assert f"{name} {cell}" in flat, (name, cell)  # every column, key beside value


def test_a_wide_terminal_gets_the_table() -> None:
    text = printed(render.rich_table(summaries(LONG, "b")), 320)
    assert not folded(text) and "not shown" not in text and LONG in text


def test_the_table_folds_when_more_than_half_its_columns_would_go() -> None:
    arms = summaries(LONG, "b")
    names, rows = render.table_columns(arms), render.table_rows(arms)
    for width in range(40, 320, 4):
        shown, widths = render.fit_columns(names, rows, width, render.DROP_ORDER)
        text = printed(render.rich_table(arms), width)
        table = widths is not None and len(names) - len(shown) <= len(names) / 2
        assert folded(text) != table, width


@settings(max_examples=60, deadline=None)
@given(
    name=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=30),
    width=st.integers(min_value=36, max_value=220),
)
def test_an_arm_name_or_a_number_is_never_cut(name: str, width: int) -> None:
    arms = summaries(name, "other")
    text = printed(render.rich_table(arms), width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    words = set(text.replace("│", " ").split())
    assert render.printable(name) in words or render.printable(name) in text
    row = render.table_rows(arms)[0]
    decode = row[render.table_columns(arms).index("decode tok/s")]
    assert decode in text  # the most important figure, whole, in either form


def test_text_from_the_log_is_escaped_in_the_table_and_markdown() -> None:
    name = "a\x1b[2Jb"
    events = [*arm_events(name, 0.0, end=False)]
    events.append(ErrorEvent(t=9.0, wall=9.0, arm=name, message="boom\x07\x1b]52;c;eA==\x07",
                             line="ERROR: boom"))  # fmt: skip
    arms = summarize(Session.from_events(events))
    sources = render.markdown_of_sources([render.SourceSummaries("src\x1b[1m.log", arms)])
    for text in (
        printed(render.rich_table(arms, title="t\x1bitle"), 200),
        printed(render.rich_table(arms), 40),
        render.markdown(arms),
        sources,
    ):
        assert "\x1b" not in text and "\x07" not in text
        assert "a\\x1b[2Jb" in text
    assert "src\\x1b[1m.log" in sources
    assert "boom\\x07\\x1b]52;c;eA==\\x07" in render.markdown(arms)  # the reason, from the log


def test_json_is_strict_non_finite_figures_are_null() -> None:
    [arm] = summaries("a")
    odd = dataclasses.replace(arm, decode_mean=math.nan, decode_max=math.inf,
                              power_w_mean=-math.inf)  # fmt: skip

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    for text in (
        render.to_json([odd]),
        render.to_json_of_sources([render.SourceSummaries("x", [odd])]),
    ):
        [obj] = json.loads(text, parse_constant=refuse)
        assert (obj["decode_mean"], obj["decode_max"], obj["power_w_mean"]) == (None, None, None)
        assert obj["decode_min"] == arm.decode_min  # finite figures untouched


def test_strict_json_makes_every_non_finite_number_null_wherever_it_is() -> None:
    """Strict JSON has no NaN or Infinity: a summary's figure that is one is null, in lists,
    tuples and mappings too; a document of finite numbers is written as it is."""
    from types import MappingProxyType

    from anemon.analysis.render import strict_json

    hostile = {"a": float("nan"), "b": [1.0, float("inf")], "c": (float("-inf"),),
               "d": MappingProxyType({"e": 2.5})}  # fmt: skip
    assert json.loads(strict_json(hostile)) == {"a": None, "b": [1.0, None], "c": [None],
                                                "d": {"e": 2.5}}  # fmt: skip
    assert strict_json({"x": [1.5, 2]}) == '{\n  "x": [\n    1.5,\n    2\n  ]\n}\n'


ODD_JSON = (
    1e-05, -7.4e-09, 9.9e-5, 0.0001, 1e16, 1.5e300, 5e-324, -0.0, 10.00001, 2**63, 2**70,
    "é", "\x7f", "\u2028", "\x01\x1f\b\f\n\r\t\"\\/", "\ud800", [], {}, (1, 2), True, None,
    {"k": {1: "a key that is not a str"}},
)  # fmt: skip
"""Where orjson's bytes and json's may differ: the fast encoder must give json's."""


@pytest.mark.parametrize("value", ODD_JSON, ids=repr)
def test_strict_json_writes_the_bytes_json_writes(value: object) -> None:
    from anemon.analysis.render import strict_json

    for document in (value, [value, {"x": value}]):
        assert strict_json(document) == json.dumps(document, indent=2) + "\n"


def test_json_list_in_parts_is_the_document_whole() -> None:
    """Batches of items, whatever their count, make the bytes of the list encoded whole."""
    from anemon.analysis.render import _JSON_BATCH, json_list, strict_json

    for count in (0, 1, _JSON_BATCH, 2 * _JSON_BATCH + 1):
        items = [{"i": i, "f": i / 7, "s": "é" if i == _JSON_BATCH else "a"} for i in range(count)]
        parts = list(json_list(iter(items)))
        assert "".join(parts) == strict_json(items), count
        assert len(parts) == -(-count // _JSON_BATCH) + 1  # no part holds more than a batch


def test_the_headers_say_the_units_of_their_figures() -> None:
    """Issue 24, item 8: "tok/s and W in the headers", in the table and the Markdown alike
    (JSON and CSV keep the spec's keys: `decode_mean`, `power_w_mean`)."""
    arms = summaries("a")
    header = render.markdown(arms).splitlines()[0].strip("| ").split(" | ")
    assert {"decode tok/s", "prefill tok/s", "power W", "J/token"} <= set(header)
    table = printed(render.rich_table(arms), 400)
    assert "decode tok/s" in table and "power W" in table and "mean" not in table
    assert render.to_csv(arms).splitlines()[0].split(",")[:4] == [
        "arm", "trials", "tokens", "decode_mean"
    ]  # fmt: skip
