"""anemon.text.printable: what reaches a terminal from a log is literal text."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from anemon.text import printable


def test_escape_sequences_and_invisible_characters_are_shown_escaped():
    assert printable("a\x1b]52;c;aGk=\x07b") == "a\\x1b]52;c;aGk=\\x07b"
    assert printable("\u202eevil\tx\n") == "\\u202eevil\\x09x\\x0a"
    assert printable("\ufeffarm\u200b\x9b\U000e0001") == "\\ufeffarm\\u200b\\x9b\\U000e0001"


def test_ordinary_text_is_unchanged():
    for text in ("qwen3_1b7_ane_pal8", "décodage 33 → 22 tok/s", "名前", "a b", ""):
        assert printable(text) == text


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_no_control_or_format_character_survives(text):
    shown = printable(text)
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in shown)
    assert printable(shown) == shown  # what is shown is shown as it is
