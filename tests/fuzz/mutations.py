"""Hostile input, generated: protocol lines and recording lines mutated the ways a log breaks.

Seeded (random.Random), so a failure reproduces from its seed and line number. Used by the
fuzz tests (100,000 lines) and by bench/fuzz.py (a million).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator

ARMS = ("qwen3_1b7_ane_pal8", "qwen3_1b7_gpu_f16", "arm\x1b[2Jx", "../../etc/passwd", "=cmd()")

HOSTILE_VALUES = (
    "9" * 5000,  # past Python's int-from-string digit limit
    "99999999999999999999999",  # past int64
    "-99999999999999999999999",
    "1e308",
    "1e309",
    "-1e308",
    "inf",
    "-inf",
    "Infinity",
    "nan",
    "NaN",
    "-0.0",
    "-1",
    "-12.5",
    "0x1f",
    "1_000",
    "",
    "\x00",
    "\ufeff1",
    "٣",  # a non-ASCII digit that int() accepts
    "\x1b]52;c;aGVsbG8=\x07",  # a clipboard write
    "\x1b[2J\x1b[H",  # a screen clear
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",  # a hyperlink
    '"quoted \\" value"',
    '"unterminated',
    "=@+-",
    "\u202eevil",
    "é" * 50,
    "x" * 300,
)

KEYS = (
    "trial",
    "warmup",
    "t",
    "prompt_tokens",
    "prompt_tps",
    "decode_tps",
    "gen",
    "battery",
    "battery_state",
    "thermal",
    "free_gb",
    "load_s",
    "cold",
    "footprint_gb",
    "reason",
    "trials",
    "bits",
    "p",
    "g",
    "n",
    "compute",
    "arm",
    "tag",
)


def valid_lines(rng: random.Random) -> Iterator[str]:
    """An endless, well-formed bench log: arms launched in turn, trials, idles, errors."""
    t = 0.0
    while True:
        arm = rng.choice(ARMS)
        yield f"START arm={arm} model=M compute={rng.choice(('ane', 'gpu'))} bits=8 mode=sustain"
        yield f"LOAD arm={arm} load_s=0.3 cold=0 footprint_gb=1.6"
        for trial in range(rng.randint(1, 40)):
            t += rng.uniform(1.0, 6.0)
            yield (
                f"TRIAL arm={arm} trial={trial} warmup={int(trial == 0)} t={t:.1f} "
                f"prompt_tokens=128 prompt_tps={rng.uniform(500, 4000):.1f} "
                f"decode_tps={rng.uniform(5, 80):.1f} gen=256 battery={rng.randint(0, 100)} "
                f"battery_state=unplugged thermal={rng.choice(('nominal', 'fair', '2', '3'))}"
            )
            if rng.random() < 0.05:
                yield f"IDLE thermal=fair battery=80 free_gb={rng.uniform(0, 100):.1f}"
            if rng.random() < 0.02:
                yield f"2026-09-15T10:12:40Z [bench] arm={arm} ERROR: Metal GPU Timeout"
            if rng.random() < 0.02:
                yield "free text from the app \x1b[31mred\x1b[0m"
        yield f"END arm={arm} reason={rng.choice(('done', 'error', 'aborted'))} trials=40"


def mutate(line: str, rng: random.Random) -> str:
    """One or more of the ways a hostile or damaged log changes a line (never adds a newline)."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        line = rng.choice(_MUTATIONS)(line, rng)
    return line.replace("\n", " ").replace("\r", " ")


def _set_value(line: str, rng: random.Random) -> str:
    return f"{line} {rng.choice(KEYS)}={rng.choice(HOSTILE_VALUES)}"


def _replace_value(line: str, rng: random.Random) -> str:
    words = line.split(" ")
    i = rng.randrange(len(words))
    key = words[i].partition("=")[0] or rng.choice(KEYS)
    words[i] = f"{key}={rng.choice(HOSTILE_VALUES)}"
    return " ".join(words)


def _truncate(line: str, rng: random.Random) -> str:
    return line[: rng.randrange(len(line) + 1)]


def _insert_junk(line: str, rng: random.Random) -> str:
    i = rng.randrange(len(line) + 1)
    junk = "".join(chr(rng.choice((0, 7, 27, 0x7F, 0x9B, 0x202E, 0xFEFF, 0xFFFD))) for _ in "..")
    return line[:i] + junk + line[i:]


def _swap_kind(line: str, rng: random.Random) -> str:
    kind = rng.choice(("START", "LOAD", "TRIAL", "IDLE", "END", "trial", "Trial", "ERROR:", ""))
    return f"{kind} {line.partition(' ')[2]}"


def _duplicate_key(line: str, rng: random.Random) -> str:
    return f"{line} {rng.choice(KEYS)}=1 {rng.choice(KEYS)}=2"


def _long(line: str, rng: random.Random) -> str:
    return line + " x=" + "y" * rng.choice((1_000, 70_000))


_MUTATIONS = (
    _set_value,
    _replace_value,
    _replace_value,
    _truncate,
    _insert_junk,
    _swap_kind,
    _duplicate_key,
    _long,
)


def hostile_log(seed: int, count: int, share: float = 0.5) -> list[str]:
    """`count` lines of a bench log, `share` of them mutated."""
    rng = random.Random(seed)
    lines = valid_lines(rng)
    picked = itertools.islice(lines, count)
    return [mutate(line, rng) if rng.random() < share else line for line in picked]


def encode(lines: list[str], rng: random.Random) -> bytes:
    """The log's bytes, with a few invalid UTF-8 sequences and CRLF endings mixed in."""
    out = bytearray()
    for line in lines:
        out += line.encode("utf-8", errors="surrogatepass")
        if rng.random() < 0.01:
            out += rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"))
        out += b"\r\n" if rng.random() < 0.05 else b"\n"
    return bytes(out)


OTHER_TYPES = ("", "text", -1, 10**30, 1e308, True, None, [], {}, [1, 2], {"a": 1})


def swap_field_types(record: dict[str, object], rng: random.Random) -> dict[str, object]:
    """A recorded object with one field's value replaced by a value of another JSON type."""
    if not record:
        return record
    key = rng.choice(sorted(record))
    return {**record, key: rng.choice(OTHER_TYPES)}


def hostile_json_line(text: str, rng: random.Random) -> str:
    """A recording line with a field type swapped, a non-finite number, or a byte damaged."""
    choice = rng.random()
    if choice < 0.4:
        try:
            record = json.loads(text)
        except ValueError:
            return text
        if isinstance(record, dict):
            return json.dumps(swap_field_types(record, rng))
        return text
    if choice < 0.6:
        return text.replace(":", ': Infinity, "x":', 1) if '"t"' in text else text
    i = rng.randrange(len(text)) if text else 0
    return text[:i] + chr(rng.randrange(1, 0x250)) + text[i + 1 :]
