"""The metric-key vocabulary has one parser and one formatter (``ub_core.metric_keys``), ASCII digits only, and no
module builds or parses a per-N key by hand."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ub_core.metric_keys import key_matches, per_n_key, per_n_pattern, split_key

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ub_core", "ub_inspect", "ub_lmeval")


@pytest.mark.parametrize("key, expected", [
    ("ks@100", ("ks", 100)), ("p_pass@20", ("p_pass", 20)), ("p_pass_bounds@5", ("p_pass_bounds", 5)),
    ("wdz", ("wdz", None)), ("ks@0100", ("ks@0100", None)), ("ks@0", ("ks@0", None)),
    ("ks@１００", ("ks@１００", None)), ("ks@²", ("ks@²", None)), ("ks@٣", ("ks@٣", None)), ("ks@", ("ks@", None)),
    ("@5", ("@5", None)), ("ks@+5", ("ks@+5", None)), ("ks@ 5", ("ks@ 5", None)), ("ks@5 ", ("ks@5 ", None)),
])
def test_split_key_reads_ascii_digits_only(key, expected):
    assert split_key(key) == expected


_PREFIX = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)


@given(_PREFIX, st.integers(min_value=1, max_value=10**9))
def test_the_formatter_and_the_parser_are_inverse(prefix, n):
    key = per_n_key(prefix, n)
    assert split_key(key) == (prefix, n)
    assert key_matches(key, per_n_pattern(prefix))
    assert not key_matches(key, per_n_pattern(prefix + "x"))


@given(st.text(max_size=12))
def test_any_text_is_either_a_per_n_key_or_left_whole(text):
    prefix, n = split_key(text)
    if n is None:
        assert prefix == text
    else:
        assert per_n_key(prefix, n) == text and text.isascii()


def test_a_pattern_matches_only_per_n_keys_of_its_prefix():
    assert key_matches("ks@20", "ks@*") and key_matches("wdz", "wdz")
    for key in ("ks@0100", "ks@x", "ks", "kss@20", "ks@２０"):
        assert not key_matches(key, "ks@*"), key


# ------------------------------------------------------------------------------------------------ no side doors

_KEY_HEAD = re.compile(r"(?:^|[^A-Za-z0-9_])[a-z][a-z0-9_]*@$")
_KEY_LITERAL = re.compile(r"[a-z][a-z0-9_]*@[0-9]+")
_PARSERS = ("split", "rsplit", "partition", "rpartition", "startswith", "endswith", "index", "find")


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def hand_built_keys(source: str, where: str) -> list[str]:
    """Places in ``source`` that build (``f"ks@{n}"``, ``"ks@" + n``, the literal ``"ks@100"``) or parse
    (``k.startswith("ks@")``, ``k.split("@")``) a per-N metric key instead of calling ``ub_core.metric_keys``."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for a, b in zip(node.values, node.values[1:]):
                if isinstance(a, ast.Constant) and _KEY_HEAD.search(str(a.value)) and \
                        isinstance(b, ast.FormattedValue):
                    found.append(f"{where}:{node.lineno}: builds {a.value.split()[-1]}{{...}}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and isinstance(side.value, str) and side.value.endswith("@"):
                    found.append(f"{where}:{node.lineno}: concatenates {side.value!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and \
                node.func.attr in _PARSERS:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and (
                    arg.value == "@" or (node.func.attr in ("startswith", "endswith") and arg.value.endswith("@"))):
                found.append(f"{where}:{node.lineno}: parses with .{node.func.attr}({arg.value!r})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs and \
                _KEY_LITERAL.fullmatch(node.value):
            found.append(f"{where}:{node.lineno}: spells {node.value!r}")
    return found


def test_the_scan_finds_each_kind_of_side_door():
    source = ('a = f"ks@{n}"\nb = "p_pass@" + str(n)\nc = k.startswith("ks@")\nd = k.rpartition("@")\n'
              'e = "ks@100"\nf = per_n_key("ks", 100)\n')
    assert [line.split(": ", 1)[1].split()[0] for line in hand_built_keys(source, "x")] == \
        ["builds", "concatenates", "parses", "parses", "spells"]


def test_no_module_builds_or_parses_per_n_keys_by_hand():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name != "metric_keys.py":
                found += hand_built_keys(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "use ub_core.metric_keys (per_n_key, split_key, key_matches):\n" + "\n".join(found)
