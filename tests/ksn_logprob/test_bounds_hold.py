"""Sampling-free bounds that rest on nothing unchecked.

Each of these faults is reproduced here:

1. numbers with an exponent: ``ub/oracle`` at full precision writes draws below 1e-4 as ``3.77e-23``; the cells
   placed ``{3.`` in [3, 4] (outside the support [0, 1]) and stopped "tight" at p_pass@100 = 0 in [0, 0.003]
   where sampling passes. The tree's ``number_mass`` was 2.37, a "mass" above 1;
2. the listed route counted only the exact candidate replies and called the rest invalid: a model that writes a
   valid answer otherwise (`` {1} {1, 1}``, ``{01}``) made its valid mass and p_pass confidently wrong;
3. a server without ``prompt_logprobs``: the advice named ``-T mode``, an option this task does not have, and
   ``enumeration=auto`` did not fall back to the route the server can serve;
4. a problem with no valid reply found and too little mass left to pass expanded until the tree was exhausted;
   a KS distance of a vanishing valid mass (2e-7) entered the run's mean.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ub_core.logprob.eos import OFFLINE_EOS
from ub_core.logprob.ksn_logprob import MIN_DISTANCE_MASS, score_candidate_logprobs
from ub_core.logprob.number_cells import number_cell
from ub_core.logprob.oracle_replies import oracle_reply_law
from ub_core.logprob.reply_tree import (ReplyTree, enumerate_problem_tree_sync, enumerate_reply_tree_sync,
                                        ks_distance_to_draws, score_reply_tree)
from ub_core.metrics import p_enough_valid
from ub_core.metrics.answer_distribution import p_pass_at_n
from ub_core.problems import get_problem
from ub_core.problems.candidates import candidate_set


# ------------------------------------------------------------------------------------------------ 1. exponents

@pytest.mark.parametrize("text, support, expected", [
    ("{3.77e-2", (-math.inf, math.inf), (0.0, 0.0377)),   # the exponent's digits only grow: at most 3.77e-2
    ("{3.77e-", (0.0, 1e6), (0.0, 3.77)),
    ("{-3e-5", (-math.inf, math.inf), (-3e-5, 0.0)),
    ("{4.9", (-math.inf, math.inf), (4.9, 5.0)),
    ("{0.5", (0.0, 1.0), (0.5, 0.6)),
])
def test_number_cells_with_exponents_and_supports(text, support, expected):
    lo, hi = number_cell(text, *support)
    assert lo == pytest.approx(expected[0], abs=1e-9) and hi == pytest.approx(expected[1], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("text, support", [
    ("{3.", (0.0, 1.0)),        # outside the support: valid only with an exponent, so not placed
    ("{1.", (0.0, 1.0)),        # touches the support at one point only
    ("{3.77e", (0.0, 1.0)),     # an exponent without its sign: e- or e+ may follow
    ("{3.77e+1", (-math.inf, math.inf)),  # a positive exponent is unbounded above
    ("{7.5e-", (10.0, 20.0)),   # [0, 7.5] misses [10, 20]
])
def test_prefixes_that_are_no_cell(text, support):
    assert number_cell(text, *support) is None


def test_exponent_writer_bounds_contain_the_oracles_pass_rate():
    """The reported finding: ci-dirichlet-spread (truth in [0, 1], ~6% of draws written with an exponent). The
    oracle writes true draws, so KS@100 passes (sampled: p = 0.50); the bounds must contain that, whatever they
    cost, and the masses must be masses."""
    p = get_problem("ci-dirichlet-spread")
    law = oracle_reply_law(p)
    assert any("e-" in t for t in law.texts[:: max(1, len(law) // 2000)])  # the writer uses exponents here
    tree = enumerate_problem_tree_sync(p, lambda prefix: law.next_tokens(prefix, 20), ends=[OFFLINE_EOS],
                                       max_requests=1500)
    scores, payload = score_reply_tree(p, tree, ns=(100,))
    lo, hi = payload["p_pass_bounds@100"]
    sampled = _sampled_pass_rate(p, law, runs=40, n=100)
    assert lo <= sampled <= hi, (lo, hi, sampled)
    assert sampled >= 0.9  # teeth: the old bounds were [0, 0.0026]
    assert 0.0 <= tree.number_mass <= 1.0 + 1e-9 and 0.0 <= tree.number_escape <= tree.number_mass + 1e-9
    ks_lo, ks_hi = payload["ks_distance_bounds"]
    assert ks_lo <= 0.02  # the law is the truth's: its distance is small (old bounds: [0.337, 0.341])


def _sampled_pass_rate(problem, law, runs: int, n: int, seed: int = 7) -> float:
    """KS@N pass rate over ``runs`` runs of ``n`` replies drawn from the offline law and read by the scorer's
    parser (Monte Carlo: the independent route)."""
    from ub_core.metrics import ks_at_n

    rng = np.random.default_rng(seed)
    texts, probs = law.texts, law.probs
    truth = problem.truth()
    passed = 0
    for _ in range(runs):
        idx = rng.choice(len(texts), size=n, p=probs / probs.sum())
        values = [problem.parse(texts[i]).value for i in idx]
        values = [v for v in values if v is not None]
        passed += bool(ks_at_n(values, truth, ns=(n,), support=problem.support)[n]["pass"])
    return passed / runs


# ------------------------------------------------------------------------------------------------ 2. listed route

def test_listed_route_bounds_hold_for_a_writer_with_valid_replies_the_list_does_not_show():
    """A model writing 80% candidates as listed, 10% valid answers written otherwise (``{01}``-style, read as the
    same value) and 10% invalid: its true valid mass is 0.9. The listed route sees 0.8; its bounds must hold the
    truth: valid mass in [V, V + U] and the exact p_pass@N (the writer's whole law) inside ``p_pass_bounds@N``."""
    p = get_problem("te-poisson-conc")
    cs = candidate_set(p)
    truth_p = np.asarray(cs.p, dtype=float)
    lps = [math.log(0.8 * x) if x > 0 else -math.inf for x in truth_p]
    # the other 10% valid: all on the smallest value, written "{0" + ... (the reader reads it as that value)
    assert p.parse(" {0" + cs.texts[0][1:]).ok
    true_q = 0.8 * truth_p
    true_q[0] += 0.1
    scores, payload = score_candidate_logprobs(p, lps, ns=(10, 100))
    assert scores["valid_mass"] == pytest.approx(0.8) and scores["missing_mass"] == pytest.approx(0.2)
    assert scores["valid_mass"] <= 0.9 <= scores["valid_mass"] + scores["missing_mass"]
    truth = p.truth()
    for n in (10, 100):
        given = p_pass_at_n(true_q, cs.values, truth, n, support=p.support)["p_pass"]
        exact = p_enough_valid(0.9, n, 100, 5) * given
        lo, hi = payload[f"p_pass_bounds@{n}"]
        assert lo - 0.02 <= exact <= hi + 0.02, (n, lo, exact, hi)  # 0.02: the Monte-Carlo share's own error
    d_true = ks_distance_to_draws(true_q, cs.values, truth)
    ks_lo, ks_hi = payload["ks_distance_bounds"]
    point = payload.get("ks_distance_unresolved", scores["ks_distance"])  # the bounds are wide: out of the mean
    assert ks_lo - 1e-12 <= d_true <= ks_hi + 1e-12 and d_true > point + 0.01  # teeth


def test_known_invalid_mass_must_fit_in_the_unlisted_mass():
    p = get_problem("te-poisson-conc")
    lps = [math.log(0.8 * x) if x > 0 else -math.inf for x in candidate_set(p).p]
    assert score_candidate_logprobs(p, lps, ns=(10,), known_invalid=0.1)[1]["eps"] == pytest.approx(0.1 / 0.9)
    for bad in (0.5, -0.1, 2.0):  # more invalid mass than is unlisted, or not a mass: a contradiction, refused
        with pytest.raises(ValueError, match="known_invalid"):
            score_candidate_logprobs(p, lps, ns=(10,), known_invalid=bad)


def test_listed_route_with_no_listed_mass_leaves_the_rest_open():
    p = get_problem("te-poisson-conc")
    scores, payload = score_candidate_logprobs(p, [-math.inf] * len(candidate_set(p)), ns=(10,))
    # open, not a fail: unresolved, left out of the means and counted
    assert scores["unresolved"] == 1.0 and math.isnan(scores["p_pass@10"]) and scores["missing_mass"] == 1.0
    assert payload["p_pass_bounds@10"] == [0.0, pytest.approx(1.0)]


# ------------------------------------------------------------------------------------------------ 4. stops, means

def test_a_problem_settled_at_no_valid_mass_stops_at_once():
    """95% of the replies are the invalid ``?``; the other 5% start a number that never ends. p_pass@100 is then
    at most P(100 valid answers | V <= 0.05) ~ 1e-64: settled, so the tree stops instead of expanding the rest."""
    p = get_problem("te-normal-conc")

    def next_tokens(prefix):
        if prefix == "":
            return [("?", math.log(0.95)), ("{", math.log(0.05))]
        if prefix == "?":
            return [(OFFLINE_EOS, 0.0)]
        return [(str(d), math.log(0.1)) for d in range(10)]  # digits for ever: no leaf

    tree = enumerate_problem_tree_sync(p, next_tokens, ends=[OFFLINE_EOS], max_requests=2000)
    scores, payload = score_reply_tree(p, tree, ns=(100,))
    assert tree.stopped == "tight" and tree.requests <= 40, (tree.stopped, tree.requests)
    assert scores["no_mass"] == 1.0 and payload["p_pass_bounds@100"][1] <= 1e-6


def test_the_distance_of_a_vanishing_valid_mass_leaves_the_mean():
    p = get_problem("te-normal-conc")
    tree = ReplyTree(leaves={"{250}": 2e-7, "?": 1 - 2e-7}, missing_mass=0.0)
    scores, payload = score_reply_tree(p, tree, ns=(10,))
    assert scores["valid_mass"] < MIN_DISTANCE_MASS
    assert math.isnan(scores["ks_distance"]) and payload["ks_distance_low_mass"] > 0.4
    assert scores["p_pass@10"] == pytest.approx(0.0, abs=1e-9)  # the rate still counts the problem
    ok = ReplyTree(leaves={"{0.1}": 0.5, "?": 0.5}, missing_mass=0.0)
    assert not math.isnan(score_reply_tree(p, ok, ns=(10,))[0]["ks_distance"])


def test_tree_masses_are_masses():
    """number_mass counts each reply once, where it enters a number (it was a sum over nested prefixes: 2.37)."""
    p = get_problem("te-normal-conc")
    law = oracle_reply_law(p)
    tree = enumerate_reply_tree_sync(lambda prefix: law.next_tokens(prefix, 20), ends=[OFFLINE_EOS],
                                     max_missing=None, max_requests=300,
                                     cell_of=lambda t: number_cell(t, p.low, p.high))
    assert 0.0 < tree.number_mass <= 1.0 + 1e-9
    assert tree.number_escape <= tree.number_mass + 1e-9


# ------------------------------------------------------------------------------------------------ 3. servers

def _no_prompt_logprobs_model() -> str:
    """``ub/oracle`` through a provider that reports no ``prompt_logprobs`` (top_logprobs only): the Inspect
    model name ``ubnoprompt/oracle``."""
    from inspect_ai.model import modelapi

    def factory():
        from ub_inspect.providers import UBModelAPI

        class NoPromptLogprobsAPI(UBModelAPI):
            def _candidate_output(self, problem, continuation, prompt, n):
                out = super()._candidate_output(problem, continuation, prompt, n)
                for choice in out.choices:
                    choice.prompt_logprobs = None
                return out

        return NoPromptLogprobsAPI

    modelapi(name="ubnoprompt")(factory)
    return "ubnoprompt/oracle"


def test_auto_reads_the_tree_where_the_server_has_no_prompt_logprobs(tmp_path):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob import ksn_logprob

    ids = "te-bernoulli-spread,sh-integer-01"  # both listable
    log = inspect_eval(ksn_logprob(ids=ids, ks_ns="10"), model=_no_prompt_logprobs_model(), log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success", log.error
    for s in log.samples:
        ub = s.scores["ksn_logprob_scorer"].metadata["ub"]
        assert "tree" in ub["route"] and s.scores["ksn_logprob_scorer"].value["p_pass@10"] > 0.9, s.id


def test_listed_on_a_server_without_prompt_logprobs_names_this_tasks_options(tmp_path):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob import ksn_logprob

    log = inspect_eval(ksn_logprob(ids="te-bernoulli-spread", ks_ns="10", enumeration="listed"),
                       model=_no_prompt_logprobs_model(), log_dir=str(tmp_path), display="none")[0]
    assert log.status == "error"
    message = log.error.message
    assert "enumeration=" in message and "-T mode" not in message, message
