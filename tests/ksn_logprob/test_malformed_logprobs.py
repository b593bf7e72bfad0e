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


def _string_logprob_api():
    from inspect_ai.model import Logprob

    from ub_inspect.providers import UBModelAPI

    class StringLogprobAPI(UBModelAPI):
        def _tree_output(self, problem, prefix, prompt, n, config):
            Logprob(token="{", logprob="minus one")  # the server's body, as Inspect's provider reads it: refused
            raise AssertionError("unreachable")

    return StringLogprobAPI


def test_inspect_names_a_string_log_probability_in_one_line_and_counts_it(tmp_path):
    """The finding: a log-probability sent as a string gave a 200-line traceback and exit 0. Now the sample is
    scored: malformed, one line in its explanation, counted by ``bad_logprobs``."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import modelapi

    from ub_inspect.ksn_logprob import ksn_logprob

    modelapi(name="ubstringlp")(_string_logprob_api)
    log = inspect_eval(ksn_logprob(ids="te-normal-conc", enumeration="tree", ks_ns="10"), model="ubstringlp/oracle",
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    (sample,) = log.samples
    score = sample.scores["ksn_logprob_scorer"]
    assert score.value["bad_logprobs"] == 1.0 and score.value["p_pass@10"] == 0.0
    assert "malformed: after '': the server's next-token list could not be read (ValidationError" in \
        score.explanation and "\n" not in score.explanation
    assert log.results.scores[0].metrics["bad_logprobs"].value == 1.0
