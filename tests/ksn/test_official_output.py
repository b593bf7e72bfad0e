"""The streaming reader of release programs' output agrees with Python's own reading (ast.literal_eval of the
whole output, or else of its last non-empty line), however the bytes are split into chunks."""

from __future__ import annotations

import ast
import random
import re
import time

import numpy as np
import pytest
from support.linearity import assert_linear

from ub_core.release_tools.official_output import MAX_VALUE_CHARS, OutputReader, parse_output

_NP = re.compile(r"\b(?:np|numpy)\.(?:float|int|uint|bool|str)_?\d*\(([^()]*)\)")


def _reference(text: str):
    """What literal_eval reads (numpy scalar reprs unwrapped), or None where it reads no list."""
    text = text.strip()
    candidates = [text] + ([text.splitlines()[-1].strip()] if "\n" in text else [])
    for cand in candidates:
        try:
            got = ast.literal_eval(_NP.sub(r"\1", cand))
        except Exception:  # noqa: BLE001 - any failure means "not this candidate"
            continue
        if isinstance(got, (list, tuple)):
            return [list(v) if isinstance(v, tuple) else v for v in got]
        return None
    return None


def _feed(text: str, sizes) -> list:
    reader = OutputReader(None)
    data = text.encode("utf-8")
    pos, i = 0, 0
    while pos < len(data):
        step = sizes[i % len(sizes)]
        reader.feed(data[pos:pos + step])
        pos, i = pos + step, i + 1
    return reader.finish()


def _outputs() -> list[str]:
    rng = random.Random(7)
    gen = np.random.default_rng(7)
    labels = ["A", "b c", "it's", 'say "hi"', "a\nb", "tab\there", "back\\slash", "ünï", "x'y\"z", "1,2", "[x]"]
    outs = [
        repr(gen.normal(0, 1e-6, 50).tolist() + gen.normal(0, 1e6, 50).tolist() + [5e-324, 1.7e308, -0.0]),
        repr(list(gen.uniform(-3, 3, 40))),  # np.float64(...) reprs
        repr(list(gen.integers(-5, 5, 40))),  # np.int64(...)
        repr([np.str_(x) for x in gen.choice(["A", "B"], 20)]),
        repr([rng.choice(labels) for _ in range(60)]),
        repr([rng.sample([1, 2, 3, 4], 4) for _ in range(30)]),
        repr([tuple(rng.sample(["p", "q's", "r"], 3)) for _ in range(20)]),
        repr(tuple(rng.random() for _ in range(20))),
        "progress 50%\nprogress 100%\n" + repr([rng.randint(0, 9) for _ in range(30)]) + "\n\n",
        "[1,\n 2.5e-07,\n 3]\n",
        "[1, 2]\r\n[3, 4]\r\n",
        "  [ 1 , 2 ,3 , ]  ",
        "[0x1F, 0o17, 0b101, 1_000, 1.5E+3, .5, 5., +2]",
        "[(1), (2), 3]",
        "[(1,), ('a',)]",
        "[[1, 'a'], [2, 'b']]",
    ]
    return outs


@pytest.mark.parametrize("text", _outputs(), ids=lambda t: t[:30])
def test_agrees_with_literal_eval_however_the_bytes_are_split(text):
    want = _reference(text)
    assert want is not None
    assert parse_output(text, None) == want
    for sizes in ([1], [2], [3], [5, 7], [64], [4096], [1, 13, 2, 101]):
        assert _feed(text, sizes) == want, sizes
    data = text.encode()
    for cut in range(0, len(data) + 1, max(1, len(data) // 200)):  # every two-chunk split, on the short ones
        reader = OutputReader(None)
        reader.feed(data[:cut])
        reader.feed(data[cut:])
        assert reader.finish() == want, cut


@pytest.mark.parametrize("text", [
    "[1, 2] [3]", "[1, 2", "[1 2]", "[,1]", "[1,,2]", "[[1, [2]]]", "[np.float64(1.5]", "[b'x']", "[f'x']",
    "['a' 'b']", "[1, 2)", "([1)]", "[np.array([1])]", "[1j]", "[-]", "[*x]", "[1 if 1 else 2]", "[{1}]",
])
def test_refuses_what_is_not_a_plain_list(text):
    with pytest.raises(ValueError):
        parse_output(text, None)
    with pytest.raises(ValueError):
        _feed(text, [1])


def test_a_value_that_never_ends_is_refused_without_holding_it():
    reader = OutputReader(None)
    reader.feed(b"['")
    for _ in range(64):
        reader.feed(b"A" * 4096)
    assert len(reader._buf) + reader._pending_len <= 2 * MAX_VALUE_CHARS + 4096  # the text held, read or not
    with pytest.raises(ValueError, match="not a Python literal list"):
        reader.finish()


def test_blank_line_floods_and_short_lines_are_cheap():
    reader = OutputReader(3)
    reader.feed(b"\n" * 1_000_000)
    reader.feed(b"log\n" * 1000 + b"[1, 2, 3]\n")
    assert reader.finish() == [1, 2, 3]


def test_counts_are_checked():
    with pytest.raises(ValueError, match="printed more than 3 values"):
        parse_output("[1, 2, 3, 4, 5]", 3)
    with pytest.raises(ValueError, match="printed 2 values, expected 3"):
        parse_output("[1, 2]", 3)
    with pytest.raises(ValueError, match="not UTF-8"):
        reader = OutputReader(3)
        reader.feed(b"['\xff']")
        reader.finish()


# ------------------------------------------------------------------------------------------------ linear time

def _hostile_shapes() -> list:
    """(name, function of a length n giving an output of about n characters)."""
    rng = random.Random(35)
    shapes = [
        ("digits", lambda n: "[" + "1" * n),
        ("float digits", lambda n: "[1." + "5" * n),
        ("exponent", lambda n: "[1e" + "5" * n),
        ("underscores", lambda n: "[" + "1_" * (n // 2)),
        ("wrapped number", lambda n: "[np.float64(" + "1" * n),
        ("label", lambda n: "['" + "a" * n),
        ("escapes", lambda n: "['" + "\\'" * (n // 2)),
        ("spaces", lambda n: "[" + " " * n),
        ("name", lambda n: "[np." + "a" * n),
        ("open shuffle", lambda n: "[[" + "1, " * (n // 3)),
        ("garbage", lambda n: "@" * n),
        ("values", lambda n: "[" + "1.5, " * (n // 5)),
    ]
    alphabet = "[]()0123456789.eE+-_,'\" \\\nnpxf"
    for _ in range(8):  # seeded fuzz: a short random motif repeated
        motif = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        prefix = rng.choice(["[", "[[", "['", "[np.float64(", ""])
        shapes.append((f"motif {motif!r}", lambda n, m=motif, p=prefix: p + m * (n // len(m))))
    return shapes


def _read_time(text: str, chunk: int) -> float:
    data = text.encode("utf-8")
    t0 = time.perf_counter()
    reader = OutputReader(None)
    for pos in range(0, len(data), chunk):
        reader.feed(data[pos:pos + chunk])
    try:
        reader.finish()
    except ValueError:
        pass
    return time.perf_counter() - t0


@pytest.mark.slow
@pytest.mark.parametrize("name,make", _hostile_shapes(), ids=lambda x: x if isinstance(x, str) else "")
def test_reading_is_linear_whatever_the_output(name, make):
    """Outputs built to hurt backtracking patterns and rescans, fed in 16-byte pieces (as a program that flushes
    often sends them): 4 times the output takes about 4 times as long, not 16."""
    small, big = make(10_000), make(40_000)
    assert_linear(lambda text: _read_time(text, 16), small, big, len(big) / len(small), name)
