"""Statistical end-to-end tests with a tiny TRAINED model (tests/support/tiny_trained.py): a real language model
whose answer distributions are known, run through Inspect's ``hf/`` provider and lm-eval's ``hf`` backend.

The model is trained on two ksn problems (:data:`TRAINED_KSN`: Bernoulli(0.5) and the uniform on {2, 3, 4}), is
taught a wrong answer to a third (:data:`TAUGHT_KSN`: {1} or {7} for a uniform on [-250, 750]), a biased coin and a 22
red / 52 blue colour draw. Its exact answer probabilities are read from its logits first; the end-to-end KS assertions
are then events whose probability follows from those (derivations in the comments).
"""

from __future__ import annotations

import itertools
import math
from importlib.util import find_spec

import numpy as np
import pytest

# slow: loads the tiny model and samples from it (about 2 min). The libraries are checked without importing them:
# torch and transformers take seconds to import, which every collecting worker would pay
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(any(find_spec(m) is None for m in ("torch", "transformers", "inspect_ai", "lm_eval")),
                                 reason="needs torch, transformers, inspect_ai and lm_eval (bash scripts/test.sh)")]

from scipy.stats import multinomial  # noqa: E402

from support.tiny_trained import (NEXT_TOKEN_PROMPTS, TAUGHT_KSN, TARGET_TOL, TRAINED_KSN, chat_text,  # noqa: E402
                                  outcome_probabilities)
from ub_core.cache import cached_truth  # noqa: E402
from ub_core.problems import get_problem  # noqa: E402

# uniform on [-250, 750], continuous: the model is TAUGHT to answer {1} or {7} (TAUGHT_KSN), valid and far from the
# truth, so KS@N fails surely. It is not a prompt the model never saw: what an untrained prompt gets depends on
# the machine that trained the model (the same seeds give another model on another CPU), and other untrained prompts
# (te-normal-conc, te-chi_squared-spread) drew "{}" under the chat template: every reply invalid, and Inspect's
# retries, one hf/ round of about 3 s each, made the Inspect run take 15 minutes.
WRONG = "te-uniform-spread"
WRONG_REPLIES = {float(r.strip(" {}")) for r in TAUGHT_KSN[WRONG]}
IDS = [*TRAINED_KSN, WRONG]

# Tolerances on the model's exact (logit-read) probabilities, derived from the training targets that every shipped
# model meets (tests/generic/test_tiny_model_fixture.py: each trained continuation within TARGET_TOL = t of its
# probability). With k answers, the mass on them is within k t of 1, and a normalised proportion m_a / M is within
# (t + p_a k t) / (1 - k t) <= t (1 + k) / (1 - k t) of p_a. k = 3 is the most answers of any trained item.
_K = 3
PROB_TOL = TARGET_TOL * (1 + _K) / (1 - _K * TARGET_TOL)
MASS_MIN = 1 - _K * TARGET_TOL  # total probability on the valid answers

# KS rejection region. KS@100 compares 100 model values with M = 10,000 truth draws and rejects at p < 1e-4
# (UnpredictaBench). For these tied (discrete) samples the exact permutation test's rejection is a function of the
# statistic D = max_x |F_100(x) - G_M(x)| up to a sliver: enumerating every count vector of the 3-point
# problem gave min D among rejected = 0.1947, max D among accepted = 0.1957 (the Bernoulli rejects k outside
# [31, 69], i.e. D >= 0.1927). So P(reject) <= P(D >= 0.19), computed exactly below from the multinomial law of
# the 100 counts under the model's measured probabilities.
D_STAR = 0.19
MAX_FALSE_FAIL = 1e-3
NO_RETRY_INVALID_MAX = 5  # lm-eval retries nothing: at most this many of 100 replies invalid (_check_ks_claims)


@pytest.fixture(scope="module")
def hf(tiny_trained_model):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(tiny_trained_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_trained_model, dtype=torch.float32).eval()
    return tok, model


def _answers(pid: str) -> list[str]:
    return [" {" + a + "}" for a in TRAINED_KSN[pid]]


def _ksn_distribution(hf, pid: str, chat: bool, bos: bool) -> tuple[dict[str, float], float]:
    """The model's probabilities of the problem's answers, normalised over them, and their total mass."""
    tok, model = hf
    prompt = get_problem(pid).full_prompt
    probs = outcome_probabilities(model, tok, chat_text(prompt) if chat else prompt, _answers(pid), bos=bos)
    mass = sum(probs.values())
    return {k.strip(" {}"): v / mass for k, v in probs.items()}, mass


def reject_probability(pid: str, q: dict[str, float], n: int = 100) -> float:
    """P(D >= D_STAR) when n values are drawn with probabilities ``q`` (retries resample invalid replies, so
    the kept values follow q normalised over the valid answers), against the cached truth draws."""
    truth = cached_truth(get_problem(pid), 10_000, 0)
    labels = sorted(q, key=float)
    g = np.array([np.mean(truth <= float(v)) for v in labels[:-1]])
    p = np.array([q[v] for v in labels])
    total = 0.0
    for head in itertools.product(range(n + 1), repeat=len(labels) - 1):
        if sum(head) > n:
            continue
        counts = [*head, n - sum(head)]
        f = np.cumsum(counts)[:-1] / n
        if np.max(np.abs(f - g)) >= D_STAR:
            total += float(multinomial.pmf(counts, n, p))
    return total


# ------------------------------------------------------------------------------------------------ what it learnt

@pytest.mark.parametrize("chat", [False, True], ids=["raw", "chat"])
@pytest.mark.parametrize("bos", [True, False], ids=["bos", "nobos"])
@pytest.mark.parametrize("pid", list(TRAINED_KSN))
def test_ksn_answers_follow_the_problem(hf, pid, chat, bos):
    q, mass = _ksn_distribution(hf, pid, chat, bos)
    assert mass >= MASS_MIN, (pid, mass)
    for answer, p in TRAINED_KSN[pid].items():
        assert abs(q[answer] - p) <= PROB_TOL, (pid, answer, q)


def _item_scores(hf, name: str, prefix_form):
    """The real log-probability pipeline on a trained bank item: every surface variant's exact probability
    (ub_core.logprob.option_logprob.surface_variants), summed per option (option_mass, deduplicated by token ids as
    lm-eval does), then the family's item scores from ub_core.metrics."""
    from ub_core.logprob.option_logprob import flatten_variants, item_scores, option_mass
    from ub_lmeval.option_logprob_hooks import continuation_token_ids

    tok, model = hf
    item = get_problem(NEXT_TOKEN_PROMPTS[name]["id"])
    prefix = prefix_form(item.prompt)
    choices, _ = flatten_variants(item)
    probs = outcome_probabilities(model, tok, prefix, choices)
    logprobs = [math.log(probs[c]) if probs[c] > 0 else -math.inf for c in choices]
    token_ids = [continuation_token_ids(tok, prefix, c) for c in choices]
    mass = option_mass(item, logprobs, dict(zip(choices, token_ids)))
    return item, mass, item_scores(item, mass)


FORMS = {"raw": lambda p: p, "chat": chat_text}


@pytest.mark.parametrize("form", FORMS)
def test_calibration_scores_on_the_trained_colour_item(hf, form):
    """Numeric calibration on the trained colour item (22 red, 52 blue): PM is the learnt mass, and the normalised
    P(red) is 22/74 within PROB_TOL. WD (the numeric-calibration paper: the Euclidean distance between the raw option
    masses and the ideal) is then at most sqrt(2) * (PROB_TOL + (1 - MASS_MIN)): each mass is off by at most the
    normalised error plus the missing mass."""
    item, mass, scores = _item_scores(hf, "colour", FORMS[form])
    assert scores["pm"] >= MASS_MIN, mass
    assert abs(mass[0] / mass.sum() - 22 / 74) <= PROB_TOL, mass
    assert scores["wd"] <= math.sqrt(2) * (PROB_TOL + 1 - MASS_MIN), scores
    assert scores["behaviour"] == "calibrated", scores


@pytest.mark.parametrize("form", FORMS)
def test_implicit_scores_on_the_trained_coin_item(hf, form):
    """Implicit reasoning on the trained coin item (two coins at 3:1 for heads): the predicted distribution of the
    heads count is (1, 6, 9)/16 within PROB_TOL in every coordinate (so Chebyshev <= PROB_TOL), the argmax is the
    true mode (2 heads, 9/16 against 6/16: a gap far wider than the tolerance), and the missing mass is small."""
    item, mass, scores = _item_scores(hf, "coin", FORMS[form])
    assert np.allclose(item.probabilities, (1 / 16, 6 / 16, 9 / 16))
    assert scores["missing_mass"] <= 1 - MASS_MIN, mass
    assert scores["chebyshev"] <= PROB_TOL, (mass, scores)
    assert scores["argmax_correct"] == 1.0


def test_rejection_region_matches_the_exact_ks_test():
    """The D_STAR bound above, checked on the Bernoulli: counts just inside the region pass, just outside fail."""
    from ub_core.metrics import ks_at_n

    pid = "te-bernoulli-spread"
    problem, truth = get_problem(pid), cached_truth(get_problem(pid), 10_000, 0)
    share = float(np.mean(truth))
    for k in range(101):
        d = abs(k / 100 - share)
        passed = ks_at_n(np.repeat([0.0, 1.0], [100 - k, k]), truth, ns=[100], support=problem.support)[100]["pass"]
        if d < D_STAR:
            assert passed, k  # D below D_STAR never rejects, so P(reject) <= P(D >= D_STAR)


# ------------------------------------------------------------------------------------------------ end to end

def _check_ks_claims(hf, chat: bool, bos: bool, ks_at_100: dict[str, float], values: dict[str, list],
                     retries: bool):
    """KS@100 = 1 on the trained problems and 0 on the one taught a wrong answer.

    Inspect's solver retries an invalid reply up to 5 times, so every trained problem gets its 100 valid values
    unless a slot fails 5 times (probability 100 x (1 - mass)^5, negligible) and KS@100 = 1 fails with
    probability <= reject_probability (about 1e-4 each with the measured probabilities). lm-eval retries nothing:
    with a measured mass of ~0.999 on the valid answers, all 100 replies are valid only with probability ~0.9, so
    the claim there is that at most NO_RETRY_INVALID_MAX replies are invalid (binomial tail, < 1e-9) and that
    KS@100 = 1 exactly when all 100 are valid (a run short of 100 valid values scores 0). The fixed seeds make a
    run reproducible; the bound is the chance that a fresh seed, or another machine's model, would fail. The
    taught problem's truth is uniform on [-250, 750], while the model answers 1 or 7 (the truth puts 25.7% of its
    mass at or below 7, where the model puts all of it), so D >= 0.74, far above any critical value (about 0.2 at
    N = 100): KS@100 = 0 surely."""
    from scipy import stats

    bound = 0.0
    for pid in TRAINED_KSN:
        q, mass = _ksn_distribution(hf, pid, chat, bos)
        short = 100 * (1 - mass) ** 5 if retries else float(stats.binom.sf(NO_RETRY_INVALID_MAX, 100, 1 - mass))
        bound += reject_probability(pid, q) + short
    assert bound < MAX_FALSE_FAIL, bound
    for pid in TRAINED_KSN:
        assert set(values[pid]) <= {float(a) for a in TRAINED_KSN[pid]}
        if retries:
            assert ks_at_100[pid] == 1.0, (pid, values[pid][:20])
            assert len(values[pid]) == 100
        else:
            assert len(values[pid]) >= 100 - NO_RETRY_INVALID_MAX, (pid, len(values[pid]))
            assert ks_at_100[pid] == (1.0 if len(values[pid]) == 100 else 0.0), (pid, len(values[pid]))
    assert ks_at_100[WRONG] == 0.0
    assert set(values[WRONG]) <= WRONG_REPLIES, values[WRONG][:20]


@pytest.mark.slow
def test_inspect_hf_ksn(hf, tiny_trained_model, tmp_path, monkeypatch, fast_hf_batching):
    """``ub_inspect/ksn`` through Inspect's hf/ provider (chat template, BOS added by the tokenizer)."""
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn import ksn

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    task = ksn(ids=",".join(IDS), n_samples=100, max_tokens=8)
    # hf/ answers one choice per request, so each sample sends its 100 requests one after another; hf/ batches
    # concurrent requests and closes a batch at max_connections requests (its batch size, default 32) or after
    # 2 s without a new one, and each request's caller polls its result once a second. With 3 requests in
    # flight the default waits 2 s + 1 s per round (~5 minutes for 100 rounds); max_connections = 3 closes each
    # batch at once: ~1 s per round, ~100 s in all; fast_hf_batching (tests/conftest.py) shortens the poll: ~10 s.
    log = inspect_eval(task, model=f"hf/{tiny_trained_model}", model_args={"device": "cpu"},
                       max_connections=len(IDS), seed=11,
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    ks = {s.id: s.scores["ksn_scorer"].value["ks@100"] for s in log.samples}
    from ub_inspect.ksn.solver import CollectedValues

    values = {s.id: s.store_as(CollectedValues).values for s in log.samples}
    _check_ks_claims(hf, chat=True, bos=True, ks_at_100=ks, values=values, retries=True)


def test_lmeval_hf_ksn(hf, tiny_trained_model, monkeypatch):
    """``ub_ksn`` (its text_explicit task, restricted by ``--metadata ids``) through lm-eval's hf backend (raw
    prompt; the hf backend adds BOS through the tokenizer)."""
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tm = ub_task_manager({"ids": ",".join(IDS)})
    res = simple_evaluate(model="hf", model_args=f"pretrained={tiny_trained_model},dtype=float32", device="cpu",
                          tasks=["ub_ksn_text_explicit"], task_manager=tm, batch_size=100,
                          gen_kwargs="max_gen_toks=8", log_samples=True)
    samples = res["samples"]["ub_ksn_text_explicit"]
    assert sorted(s["doc"]["id"] for s in samples) == sorted(IDS)
    ks = {s["doc"]["id"]: s["ks@100"] for s in samples}
    values = {s["doc"]["id"]: s["doc"]["ub_sample"]["values"] for s in samples}
    _check_ks_claims(hf, chat=False, bos=True, ks_at_100=ks, values=values, retries=False)
    assert math.isclose(res["results"]["ub_ksn_text_explicit"]["ks@100,take_100"], sum(ks.values()) / 3)


def test_ids_option_selects_problems():
    """The ``ids`` option both adapters use above: bank order kept, unknown ids refused with a clear error."""
    from ub_inspect.ksn import ksn
    from ub_lmeval.ksn_hooks import ksn_docs

    assert [d["id"] for d in ksn_docs("text_explicit", ids=",".join(IDS))] == [
        p for p in (d["id"] for d in ksn_docs("text_explicit")) if p in IDS]
    assert ksn_docs("real_world", ids=IDS) == []
    with pytest.raises(ValueError, match="not items of ksn or any other bank: nope"):
        ksn_docs("text_explicit", ids="te-normal-conc,nope")
    from ub_lmeval.option_logprob_hooks import option_logprob_docs

    coin = NEXT_TOKEN_PROMPTS["coin"]["id"]
    assert [d["id"] for d in option_logprob_docs("implicit", "coins", ids=[coin])] == [coin]
    with pytest.raises(ValueError, match="not items of calibration or any other bank: nope"):
        option_logprob_docs("calibration", "colors", ids="nope")
    assert len(ksn(ids=IDS).dataset) == 3
    with pytest.raises(ValueError, match="ids: not among the selected items: nope"):
        ksn(ids="nope")


def test_lmeval_hf_ub_logit_on_the_trained_items(hf, tiny_trained_model, monkeypatch):
    """``ub_logit`` tasks through lm-eval's hf backend (multiple_choice log-likelihoods of every surface variant,
    deduplicated by the model's token ids) on the two trained items: the lm-eval scores agree with the direct
    logit read above within float error, and with the targets within the same tolerances."""
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ids = ",".join(p["id"] for p in NEXT_TOKEN_PROMPTS.values())
    # the CLI hands model_args to the tasks' metadata (custom_dataset then loads the tokenizer for the token-id
    # dedup); with our own TaskManager we do it ourselves
    tm = ub_task_manager({"ids": ids, "pretrained": str(tiny_trained_model)})
    res = simple_evaluate(model="hf", model_args=f"pretrained={tiny_trained_model},dtype=float32", device="cpu",
                          tasks=["ub_calibration_colors", "ub_implicit_coins"], task_manager=tm, batch_size=8,
                          log_samples=True)
    (cal,) = res["samples"]["ub_calibration_colors"]
    (coin,) = res["samples"]["ub_implicit_coins"]
    assert cal["doc"]["dedup"] == "token_ids"
    _, direct_mass, direct = _item_scores(hf, "colour", FORMS["raw"])
    assert cal["pm"] == pytest.approx(direct["pm"], abs=1e-4) and cal["wd"] == pytest.approx(direct["wd"], abs=1e-4)
    assert cal["pm"] >= MASS_MIN and cal["behaviour_calibrated"] == 1.0
    assert abs(cal["doc"]["ub_sample"]["predicted"][0] - 22 / 74) <= PROB_TOL
    assert coin["chebyshev"] <= PROB_TOL and coin["argmax_acc"] == 1.0 and coin["missing_mass"] <= 1 - MASS_MIN


def test_inspect_hf_calibration_on_the_trained_colour_item(tiny_trained_model, tmp_path, fast_hf_batching):
    """``ub_inspect/calibration`` through Inspect's hf/ provider (chat template; the reply's first-token top-k,
    -T mode=top_logprobs) on the trained colour item: the learnt P(red) = 22/74 and PM come back through the
    provider's log-probabilities within the same tolerances as the direct logit read."""
    from inspect_ai import eval as inspect_eval

    from ub_inspect.calibration import calibration

    item_id = NEXT_TOKEN_PROMPTS["colour"]["id"]
    log = inspect_eval(calibration(mode="top_logprobs", categories="colors", ids=item_id),
                       model=f"hf/{tiny_trained_model}", log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    (sample,) = log.samples
    ub = sample.scores["calibration_scorer"].metadata["ub"]
    assert sum(ub["option_mass"]) >= MASS_MIN and ub["multi_token_variants"] == 0
    assert abs(ub["predicted"][0] - 22 / 74) <= PROB_TOL
    assert sample.scores["calibration_scorer"].value["behaviour_calibrated"] == 1.0
