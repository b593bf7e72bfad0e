"""``ub/oracle`` is one model: its reply tree is the law of its sampled replies, by default and
under each writer the model arguments choose (``-M digits=N``, ``-M number_token_digits=K``), and a large
``top_k`` lists every child of a multi-digit position.

Laws are compared as laws of texts, ordered as strings: the largest gap between two CDFs over that order is at
most the sum of a DKW term for each side that is a sample (4,000 sampled replies; the tree law's 100,000 draws
where the support cannot be listed), at 1e-6 each, plus the tail mass a listed support cuts (at most 1e-6)."""

from __future__ import annotations

import asyncio
import math
import random

import numpy as np
import pytest

from ub_core.logprob import oracle_replies
from ub_core.logprob.oracle_replies import (ORACLE_TREE_DRAWS, OracleReplyLaw, ReplyWriter, _token_pattern,
                                            oracle_reply_law)
from ub_core.logprob.reply_tree import ks_distance_to_draws, read_leaves
from ub_core.problems import get_problem
from ub_core.problems.candidates import TAIL_MASS, candidate_set

ALPHA = 1e-6


def _dkw(n: int) -> float:
    return math.sqrt(math.log(2 / ALPHA) / (2 * n))


def _sampled(problem, n: int, seed: int, **model_args) -> list[str]:
    """``n`` replies of the sampled ``ub/oracle`` (the Inspect provider) with ``model_args``."""
    from inspect_ai.model import ChatMessageUser, GenerateConfig

    from ub_inspect.providers import UBModelAPI

    api = UBModelAPI("oracle", **model_args)
    out = asyncio.run(api.generate([ChatMessageUser(content=problem.full_prompt)], [], "none",
                                   GenerateConfig(num_choices=n, seed=seed)))
    return [c.message.text for c in out.choices]


def _text_cdf_gap(law: OracleReplyLaw, sampled: list[str]) -> float:
    """sup over texts t of |P_law(reply <= t) - share of sampled replies <= t| (strings in code-point order)."""
    texts, probs = law.texts, law.probs
    cum = np.concatenate([[0.0], np.cumsum(probs)])
    points = sorted(set(texts) | set(sampled))
    s = sorted(sampled)
    import bisect

    gap = 0.0
    for t in points:
        f_law = cum[bisect.bisect_right(texts, t)]
        f_s = bisect.bisect_right(s, t) / len(s)
        gap = max(gap, abs(f_law - f_s))
    return gap


def test_the_tree_law_of_the_triangular_problem_is_the_sampled_oracles():
    """On ci-triangular-conc the tree law is the sampled oracle's (which passes), not 2 significant digits with 4
    replies, KS distance 0.305 and p_pass@100 = 0: one reply per draw, written as the sampled oracle
    writes it, and its distance to the truth within two DKW terms."""
    p = get_problem("ci-triangular-conc")
    law = oracle_reply_law(p)
    assert len(law) >= 0.99 * ORACLE_TREE_DRAWS  # full precision: (almost) every draw is its own reply
    assert all(t == "{" + repr(float(t[1:-1])) + "}" for t in law.texts[::997])
    leaves = dict(zip(law.texts, law.probs.tolist()))
    values, masses, invalid = read_leaves(p, leaves)
    assert invalid == 0.0
    # 0.305 before; the KS@100 test at 1e-4 rejects only beyond about 0.2, so KS@100 passes (p_pass@100 over
    # 100,000 leaves is the scorer's work: benchmarks/bench_ksn_tree.py)
    assert ks_distance_to_draws(masses, values, p.truth()) <= _dkw(ORACLE_TREE_DRAWS) + _dkw(len(p.truth()))


def _pick(fmt: str, support: str, listed: bool, seed: int):
    """A problem drawn at random (``seed``) among those of this answer format, support and listability."""
    from ub_inspect.ksn.ksn import load_problems

    pool = [p for p in load_problems() if p.answer_format == fmt and p.support == support]
    random.Random(seed).shuffle(pool)
    return next(p for p in pool if (candidate_set(p) is not None) == listed)


# every answer format and law the bank has: listed options, orders and whole numbers; an unlisted whole-number
# spread; continuous and mixed (atoms) numbers
CASES = [("option", "categorical", True), ("permutation", "permutation", True), ("integer", "discrete", True),
         ("integer", "discrete", False), ("number", "continuous", False), ("number", "mixed", False)]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{'listed' if c[2] else 'drawn'}")
@pytest.mark.parametrize("digits", [None, 3])
def test_the_tree_law_is_the_law_of_the_sampled_replies(case, digits):
    p = _pick(*case, seed=33)
    args = {} if digits is None else {"digits": digits}
    n = 4000
    sampled = _sampled(p, n, seed=7, **args)
    law = oracle_reply_law(p, digits=digits)
    tol = _dkw(n) + (TAIL_MASS if law.exact else _dkw(ORACLE_TREE_DRAWS))
    assert _text_cdf_gap(law, sampled) <= tol, p.id
    known = set(law.texts)
    if law.exact:  # the same texts: none sampled outside the listed support beyond its cut tail and chance
        outside = sum(t not in known for t in sampled) / n
        assert outside <= TAIL_MASS + _dkw(n), p.id
    else:  # each drawn reply is written as the sampled model writes that value
        from ub_core.oracle import render_value

        for t in law.texts[:: max(1, len(law) // 200)]:
            value = float(t[1:-1])
            assert render_value(p, int(value) if p.answer_format == "integer" else value, digits) == t


def _reference_mass(texts, probs, prefix, k):
    """Next-token masses by tokenising every text in full (the definition :meth:`next_tokens` computes fast)."""
    pattern, mass = _token_pattern(k), {}
    for t, q in zip(texts, probs):
        if not t.startswith(prefix):
            continue
        ends = [0] + [m.end() for m in pattern.finditer(t)]
        if len(prefix) not in ends:
            continue
        j = ends.index(len(prefix))
        tok = None if j + 1 == len(ends) else t[len(prefix):ends[j + 1]]
        mass[tok] = mass.get(tok, 0.0) + q
    return mass


@pytest.mark.parametrize("k", [1, 2, 3])
def test_next_tokens_are_the_tokens_of_each_text(k):
    """Random texts of digits, words, spaces, punctuation and multi-byte characters: the grouping on the byte
    array gives, at every token boundary and at arbitrary prefixes, the masses of tokenising each text."""
    rng = random.Random(k)
    alphabet = list("0123456789") + list("ab  {},.-") + ["\u00e9", "\u20ac", "\u65e5"]
    for _ in range(60):
        texts = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))
                        for _ in range(rng.randint(1, 40))})
        weights = [rng.random() + 0.01 for _ in texts]
        probs = [w / sum(weights) for w in weights]
        law = OracleReplyLaw(dict(zip(texts, weights)), writer=ReplyWriter(None, k))
        pattern = _token_pattern(k)
        prefixes = {t[:m.end()] for t in texts for m in pattern.finditer(t)} | {""}
        prefixes |= {t[:rng.randint(0, len(t))] for t in texts}
        for prefix in prefixes:
            want, got = _reference_mass(texts, probs, prefix, k), law._next_token_mass(prefix)
            assert set(got) == set(want), (prefix, got, want)
            assert all(got[x] == pytest.approx(want[x], abs=1e-12) for x in want)


def test_three_digit_tokens_list_every_child_when_asked():
    """``number_token_digits=3``: after ``{4.`` the triangular law continues with 200 three-digit tokens (4.800 to
    4.999), all listed with top_k=1000 and 20 of them with top_k=20; one-digit tokens give at most 10."""
    p = get_problem("ci-triangular-conc")
    law = oracle_reply_law(p, number_token_digits=3)
    every = law.next_tokens("{4.", top_k=1000)
    assert len(every) == 200 and all(len(t) == 3 and t.isdigit() for t, _ in every)
    assert math.fsum(math.exp(lp) for _, lp in every) == pytest.approx(1.0, abs=1e-12)
    assert law.next_tokens("{4.", top_k=20) == every[:20]
    assert len(oracle_reply_law(p).next_tokens("{4.", top_k=1000)) == 2  # one digit a token: 8 or 9


def test_model_arguments_choose_the_writer_and_bad_values_are_one_line():
    from ub_inspect._options import OptionError
    from ub_inspect.providers import UBModelAPI

    p = get_problem("ci-triangular-conc")
    replies = _sampled(p, 50, seed=1, digits=2)
    assert set(replies) <= {"{4.8}", "{4.9}", "{5.0}", "{5.1}"}
    full = _sampled(p, 50, seed=1)
    assert [("{" + oracle_replies.significant_text(float(t[1:-1]), 2) + "}") for t in full] == replies
    for args, needle in [({"digits": 0}, "-M digits must be an integer from 1 to 17"),
                         ({"digits": "two"}, "-M digits must be an integer"),
                         ({"digits": True}, "-M digits must be an integer"),
                         ({"number_token_digits": 9}, "-M number_token_digits must be an integer from 1 to 4"),
                         ({"bogus_arg": 1}, "unknown model argument(s) -M bogus_arg")]:
        with pytest.raises(OptionError) as err:
            UBModelAPI("oracle", **args)
        assert needle in str(err.value) and "\n" not in str(err.value)
    assert UBModelAPI("collapse", digits="full").writer == ReplyWriter(None, 1)


def test_the_law_cache_is_bounded_by_count_and_size(monkeypatch):
    monkeypatch.setattr(oracle_replies, "_LAWS", type(oracle_replies._LAWS)())
    monkeypatch.setattr(oracle_replies, "MAX_CACHED_LAWS", 3)
    ids = ["te-poisson-conc", "te-bernoulli-conc", "te-binomial-conc", "te-geometric-conc", "ce-binomial-conc"]
    for pid in ids:
        oracle_reply_law(get_problem(pid))
    assert len(oracle_replies._LAWS) == 3
    assert [key[0] for key in oracle_replies._LAWS] == ids[-3:]  # the last used are kept
    size = next(iter(oracle_replies._LAWS.values())).nbytes
    monkeypatch.setattr(oracle_replies, "MAX_CACHE_BYTES", size)
    oracle_reply_law(get_problem(ids[0]))
    assert len(oracle_replies._LAWS) == 1


def test_inspect_passes_a_top_k_above_20_to_the_offline_model():
    """Inspect's generate carries ``top_logprobs=1000`` unclamped to ``ub/oracle -M number_token_digits=3``."""
    from inspect_ai.model import GenerateConfig, get_model

    p = get_problem("ci-triangular-conc")
    model = get_model("ub/oracle", number_token_digits=3)
    out = asyncio.run(model.generate(p.full_prompt + "{4.", config=GenerateConfig(
        logprobs=True, top_logprobs=1000, max_tokens=1, temperature=1.0)))
    top = out.choices[0].logprobs.content[0].top_logprobs
    assert len(top) == 200 and all(len(t.token) == 3 for t in top)


@pytest.mark.slow
def test_inspect_top_k_reaches_the_offline_model_through_the_task_option(tmp_path):
    """``-T top_k`` flows from the task option to each request: with ``-M number_token_digits=3 -M digits=3`` the
    position after ``{4.`` has 20 two-digit children (80 to 99); ``-T top_k=1000`` lists them all and the tree
    finishes, ``-T top_k=10`` leaves about half the mass unlisted: it stays in the cell ``{4.`` ([4, 5]), whose
    interval the unlisted digits cannot leave. (That Inspect carries 1,000 unclamped is
    :func:`test_inspect_passes_a_top_k_above_20_to_the_offline_model`.)"""
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob.ksn_logprob import ksn_logprob

    unlisted = {}
    for top_k in (10, 1000):
        (log,) = inspect_eval(ksn_logprob(enumeration="tree", ids="ci-triangular-conc", ks_ns=[10], top_k=top_k,
                                          max_requests=300), model="ub/oracle",
                              model_args={"digits": 3, "number_token_digits": 3}, log_dir=str(tmp_path),
                              display="none")
        assert log.status == "success", log.error
        score = next(iter(log.samples[0].scores.values()))
        assert score.value["missing_mass"] <= 0.01
        unlisted[top_k] = score.metadata["ub"]["cell_texts"].get("{4.", 0.0)
    assert unlisted[1000] == 0.0 and unlisted[10] >= 0.2

def test_a_server_that_allows_fewer_top_logprobs_stops_with_one_line(monkeypatch):
    """vLLM rejects ``logprobs`` above its ``--max-logprobs`` (default 20) with HTTP 400; the tree route says how
    to serve (``--max-logprobs``) instead of failing every sample with the server's body."""
    import importlib

    module = importlib.import_module("ub_inspect.ksn_logprob.ksn_logprob")
    from ub_inspect.option_logprob import LogprobsUnavailableError

    class Refusing:
        async def generate(self, *args, **kwargs):
            raise RuntimeError("Error code: 400 - {'error': {'message': 'Requested sample logprobs of 1000, which is "
                               "greater than max allowed: 20'}}")

    monkeypatch.setattr(module, "get_model", lambda *a, **k: Refusing())
    with pytest.raises(LogprobsUnavailableError) as err:
        asyncio.run(module._next_tokens("prompt", 1000))
    message = str(err.value)
    assert "\n" not in message and "at most 20" in message and "--max-logprobs 1000" in message


def test_a_writer_that_cuts_digit_runs_at_random_is_one_model_the_tree_enumerates():
    """The audit's writer of non-canonical tokenisations (``split="random"``). After a text, the next
    token of a digit run is 1 to m digits, each with probability 1 / m; the tree meets one text by many token
    paths and adds their masses. Its enumerated law must be the law of the same model's replies drawn token by
    token (within DKW at 1e-6 on each of 20,000 draws), and must differ from the canonical writer's law (whether a
    boundary falls after ``{12`` depends on what follows it), so the test can tell a wrong merge apart."""
    from ub_core.logprob.audit import sample_replies
    from ub_core.logprob.eos import OFFLINE_EOS
    from ub_core.logprob.reply_tree import enumerate_reply_tree_sync

    texts = {"{123}": 0.5, "{1234}": 0.3, "{45}": 0.2}
    law = OracleReplyLaw(texts, writer=ReplyWriter(None, 3, "random"))
    first = dict(law.next_tokens("{", 50))
    assert set(first) == {"1", "12", "123", "4", "45"}
    assert math.exp(first["1"]) == pytest.approx(0.8 / 3) and math.exp(first["45"]) == pytest.approx(0.1)
    tree = enumerate_reply_tree_sync(lambda pre: law.next_tokens(pre, 50), ends=[OFFLINE_EOS], max_missing=0.0)
    assert tree.missing_mass < 1e-12 and set(tree.leaves) == set(texts)
    draws = sample_replies(law, 20_000, np.random.default_rng(5), OFFLINE_EOS)
    for text in texts:
        assert abs(draws.count(text) / len(draws) - tree.leaves[text]) <= 2 * _dkw(len(draws)), text
    assert abs(tree.leaves["{123}"] - texts["{123}"]) > 0.05  # not the canonical writer's law
    with pytest.raises(ValueError, match="split must be one of"):
        ReplyWriter(None, 3, "greedy")
