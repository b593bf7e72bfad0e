"""Malformed next-token lists from a server are one line each, counted per problem (``bad_logprobs``), never a
traceback: a log-probability sent as a string, NaN, +inf or a positive value, fewer alternatives than asked that
hold visibly less than the mass, an end of reply that never comes. The class, not only these instances: server
bodies drawn by hypothesis, injected at a drawn node of an honest model's tree."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ub_core.logprob.eos import OFFLINE_EOS
from ub_core.logprob.oracle_replies import oracle_reply_law
from ub_core.logprob.reply_tree import enumerate_reply_tree_sync, score_reply_tree
from ub_core.problems import get_problem

PROBLEM = get_problem("te-poisson-conc")  # integers: the tree reads whole replies, no cells
LAW = oracle_reply_law(PROBLEM)


def _served(bad_at: int, body):
    """The honest law, except that the ``bad_at``-th request gets ``body``."""
    calls = [0]

    def next_tokens(prefix):
        calls[0] += 1
        if calls[0] == bad_at:
            return body
        return LAW.next_tokens(prefix, 20)

    return next_tokens


def _run(next_tokens, ends=(OFFLINE_EOS,)):
    tree = enumerate_reply_tree_sync(next_tokens, ends=list(ends), max_requests=80, max_missing=1e-4, top_k=20)
    return tree, score_reply_tree(PROBLEM, tree, ns=(10,), draws=200)


@pytest.mark.parametrize("body, words", [
    ([("{", "-0.1")], "str, not a number"),
    ([("{", float("nan"))], "nan"),
    ([("{", float("inf"))], "inf"),
    ([("{", 0.5)], "> 0"),
    ([("{", math.log(0.3)), ("x", math.log(0.2)), ("y", math.log(0.1))], "3 next tokens where 20 were asked"),
])
def test_each_malformed_list_is_one_counted_line(body, words):
    tree, (scores, payload) = _run(_served(1, body))
    assert tree.bad is not None and words in tree.bad and "\n" not in tree.bad
    assert scores["bad_logprobs"] == 1.0 and scores["p_pass@10"] == 0.0 and scores["unresolved"] == 0.0
    assert payload["bad_logprobs"] == tree.bad


def test_an_end_of_reply_that_never_comes_is_one_counted_line():
    """The server's lists never hold the end text the run expects (a wrong end-of-sequence text): after a few
    dozen finished answers the tree stops with one line instead of spending its budget."""
    def talker(prefix):  # ends its answers with a text the run does not expect, then goes on
        return [(" ", 0.0)] if "<|end|>" in prefix else LAW.next_tokens(prefix, 20, eos="<|end|>")

    tree, (scores, _) = _run(talker, ends=("</never>",))
    assert tree.bad is not None and "held the end of a reply ('</never>')" in tree.bad
    assert tree.requests < 80 and scores["bad_logprobs"] == 1.0 and "\n" not in tree.bad


_values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5), st.none(), st.booleans(),
                    st.integers(min_value=-(10**400), max_value=10**400), st.lists(st.floats(), max_size=2))
_pairs = st.one_of(st.tuples(st.text(max_size=3), _values), st.tuples(st.integers(), _values),
                   st.lists(st.text(max_size=2), max_size=3), _values)
_bodies = st.one_of(st.lists(_pairs, max_size=25), _values, st.dictionaries(st.text(max_size=2), _values, max_size=3))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bad_at=st.integers(min_value=1, max_value=6), body=_bodies)
def test_any_server_body_is_read_or_named_in_one_line(bad_at, body):
    tree, (scores, payload) = _run(_served(bad_at, body))
    if tree.bad is not None:
        assert isinstance(tree.bad, str) and "\n" not in tree.bad and len(tree.bad) < 400
        assert scores["bad_logprobs"] == 1.0 and payload["bad_logprobs"] == tree.bad
    else:  # a body that is a distribution (or was never asked): a score in range
        assert scores["bad_logprobs"] == 0.0
        assert 0.0 <= scores["valid_mass"] <= 1.0 and 0.0 <= tree.missing_mass <= 1.0


def test_inspect_reads_a_string_log_probability_as_one_counted_line(monkeypatch):
    """A log-probability sent as a string is no 200-line traceback with exit 0 (Inspect's provider refuses the
    body while building its output): the tree route's request returns the reason, and the
    tree names it in one line, counted by ``bad_logprobs``."""
    import asyncio
    import importlib

    from inspect_ai.model import Logprob

    module = importlib.import_module("ub_inspect.ksn_logprob.ksn_logprob")

    class Refusing:
        async def generate(self, *args, **kwargs):
            return Logprob(token="{", logprob="minus one")  # the server's body, as the provider reads it: refused

    monkeypatch.setattr(module, "get_model", lambda: Refusing())
    reason = asyncio.run(module._next_tokens("prompt", 20))
    assert isinstance(reason, str) and "could not be read (ValidationError" in reason and "\n" not in reason
    tree, (scores, payload) = _run(lambda prefix: reason)
    assert tree.bad == f"after '': {reason}" and scores["bad_logprobs"] == 1.0
    assert isinstance(asyncio.run(module._sample_replies("prompt", 3)), str)  # the probe likewise: a reason
