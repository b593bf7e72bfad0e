"""The option-logprob plumbing (ub_core.logprob.option_logprob, ub_core.logprob.option_logprob_oracle) and both adapters
for the calibration, implicit and explicit banks, offline, on small hand-built fixture banks installed in
ub_core.problems.BANKS.

The metrics are the real ones (ub_core.metrics); the real banks go through both adapters in
tests/calibration/test_option_logprob_real_banks.py.
"""

from __future__ import annotations

import dataclasses

import asyncio
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from ub_core import problems as ub_problems
from ub_core.logprob.option_logprob import (
    COUNT_KEYS,
    METRIC_KEYS,
    canonical_variant,
    dedup_by_token_ids,
    flatten_variants,
    option_mass,
    score_row,
    surface_variants,
)
from ub_core.logprob.option_logprob_oracle import find_option_item, oracle_option_logprob, split_option_text
from ub_core.problems import OptionItem

# ------------------------------------------------------------------------------------------------ fixture banks


def _item(bank, category, i, prompt, options, probs, answer_index=None):
    return OptionItem(id=f"fx-{bank}-{category}-{i}", bank=bank, category=category, family="categorical",
                     params={"i": i}, prompt=prompt, options=tuple(options), probabilities=tuple(probs),
                     cluster=f"{category}-{i % 2}", answer_index=answer_index, metadata={"fixture": True})


def _calibration(size=None):
    items = [
        _item("calibration", "colors", 0, "A bag holds 30 red and 70 blue marbles. I draw one at random; it is",
              ("red", "blue"), (0.3, 0.7)),
        _item("calibration", "colors", 1, "A jar has 60 green beads and 40 yellow beads. A bead picked blindly is",
              ("green", "yellow"), (0.6, 0.4)),
        _item("calibration", "wordproblems", 0, "Ann wins 2 games in 10 and Bob wins the rest. Today the winner is",
              ("Ann", "Bob"), (0.2, 0.8)),
        _item("calibration", "distributions", 0, "A whole number drawn uniformly between 3 and 5 came out as",
              ("3", "4", "5"), (1 / 3, 1 / 3, 1 / 3)),
    ]
    if size == "full":
        items.append(_item("calibration", "colors", 2, "A box holds 45 white and 55 black tiles; the tile drawn is",
                           ("white", "black"), (0.45, 0.55)))
    return tuple(items)


_SCENARIOS = [
    ("dice", "A fair six-sided die is rolled. It shows", [str(k) for k in range(1, 7)], [1 / 6] * 6),
    ("coins", "Two fair coins are tossed. The number of heads is", ["0", "1", "2"], [0.25, 0.5, 0.25]),
    ("preference", "Mia picks Left three times as often as Right. This time she picks", ["Left", "Right"],
     [0.75, 0.25]),
    ("choice", "Options A, B and C are equally likely and one is chosen. It is option", ["A", "B", "C"],
     [1 / 3] * 3),
    ("statistics", "In a ward, 10% of patients have flu and the rest a cold. Patient Lee has", ["flu", "cold"],
     [0.1, 0.9]),
    ("dice_shown", "Two fair dice are rolled; the first shows 6. The faces add up to", [str(k) for k in range(7, 13)],
     [1 / 6] * 6),
]


def _implicit(size=None):
    return tuple(_item("implicit", c, 0, p, o, q) for c, p, o, q in _SCENARIOS)


def _explicit(size=None):
    items = []
    for c, p, _o, _q in _SCENARIOS:
        prompt = (f"Question about {c}: {p} ... which probability is right? A) 0.1 B) 0.25 C) 0.5 D) 0.75 E) 0.9\n"
                  f"Answer:")
        k = 2 if c != "preference" else 3
        items.append(_item("explicit", c, 0, prompt, "ABCDE", (0, 0, 0, 0, 0)[:k] + (1,) + (0,) * (4 - k),
                           answer_index=k))
    return tuple(items)


@pytest.fixture(autouse=True)
def fixture_banks(monkeypatch):
    for name, loader in (("calibration", _calibration), ("implicit", _implicit), ("explicit", _explicit)):
        bank = ub_problems.BANKS[name]
        # same record, other items: the prompt index (Bank.find) reads them through load_bank
        monkeypatch.setitem(ub_problems.BANKS, name, dataclasses.replace(bank, load=loader, version=lambda: "fixture"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


# -----------------------------------------------------------------------------------------
# ub_core.logprob.option_logprob

def test_surface_variants():
    assert surface_variants("red") == (" red", " Red", " RED", "red", "Red", "RED")
    assert surface_variants("Heads") == (" Heads", " heads", " HEADS", "Heads", "heads", "HEADS")
    assert surface_variants("7") == (" 7", "7")  # digits have no case: the forms collapse
    assert surface_variants("A") == (" A", " a", "A", "a")
    assert surface_variants("iPhone")[0] == " iPhone"  # the option as written stays the canonical form
    assert canonical_variant("blue") == " blue"
    for bad in ("", " red", "red "):
        with pytest.raises(ValueError, match="whitespace"):
            surface_variants(bad)


def test_flatten_variants_and_clash():
    item = _calibration()[0]
    choices, owners = flatten_variants(item)
    assert choices[:6] == surface_variants("red") and owners == (0,) * 6 + (1,) * 6
    bad = OptionItem(id="x", bank="implicit", category="choice", family="c", params={}, prompt="p",
                    options=("a", "A"), probabilities=(0.5, 0.5), cluster="c")
    with pytest.raises(ValueError, match="share the surface variant"):
        flatten_variants(bad)


def test_option_mass_sums_variants_and_dedups_token_ids():
    item = _calibration()[0]  # red / blue
    lps = {" red": math.log(0.2), "red": math.log(0.05), " Red": math.log(0.05), " blue": math.log(0.5),
           "Blue": -math.inf, " BLUE": None}
    m = option_mass(item, lps)
    assert m == pytest.approx([0.3, 0.5], abs=1e-15)
    # a tokenizer that lower-cases: " red" and " Red" encode alike and count once
    ids = {" red": [5], " Red": [5], "red": [6], " blue": [7]}
    assert option_mass(item, lps, ids) == pytest.approx([0.25, 0.5], abs=1e-15)
    # the sequence form is aligned with the flattened choices
    seq = [lps.get(c) for c in flatten_variants(item)[0]]
    assert np.array_equal(option_mass(item, seq), m)
    c, o = dedup_by_token_ids([" red", " Red", " blue"], [0, 0, 1], [[5], [5], [7]])
    assert c == (" red", " blue") and o == (0, 1)


@pytest.mark.parametrize("bad, msg", [({" red": float("nan")}, "<= 0"), ({" red": 0.5}, "<= 0"),
                                      ({" red": "high"}, "not a number"), ({" purple": -1.0}, "not a surface")])
def test_option_mass_rejects_hostile_logprobs_in_one_line(bad, msg):
    with pytest.raises(ValueError, match=msg) as exc:
        option_mass(_calibration()[0], bad)
    assert "\n" not in str(exc.value)


def test_score_row_keys_per_bank():
    for loader in (_calibration, _implicit, _explicit):
        item = loader()[0]
        row = score_row(item, np.asarray(item.probabilities))
        # the count flags the scores carry follow (prefix_unresolved is the adapters': they know the tokens)
        assert tuple(row) == METRIC_KEYS[item.bank] + tuple(k for k in COUNT_KEYS[item.bank]
                                                             if k != "prefix_unresolved")


# ------------------------------------------------------------------------------------------------ oracle

def test_oracle_finds_items_and_gives_true_logprobs():
    item = _calibration()[0]
    assert find_option_item(item.prompt).id == item.id
    assert find_option_item(item.prompt + " red") is None
    found, rest = split_option_text(item.prompt + " red")
    assert found.id == item.id and rest == " red"
    assert split_option_text("not a prompt") is None
    assert math.exp(oracle_option_logprob(item, " red")) == pytest.approx(0.3)
    assert oracle_option_logprob(item, "Red") == -math.inf
    assert oracle_option_logprob(item, " red", "collapse") == 0.0
    assert oracle_option_logprob(item, " blue", "collapse") == -math.inf
    # the full edition is indexed too
    assert find_option_item(_calibration("full")[-1].prompt) is not None


# ------------------------------------------------------------------------------------------------ lm-eval

lm_eval = pytest.importorskip("lm_eval")


ALL_OPTION_LOGPROB_TASKS = ["ub_logit", "ub_explicit"]


def test_lmeval_oracle_is_the_ceiling(task_manager):
    from lm_eval import simple_evaluate

    res = simple_evaluate(model="ub-oracle", tasks=ALL_OPTION_LOGPROB_TASKS, task_manager=task_manager,
                          log_samples=True)
    r = res["results"]
    for task in ("ub_calibration_colors", "ub_calibration_wordproblems", "ub_calibration_distributions"):
        assert r[task]["pm,none"] == pytest.approx(1.0, abs=1e-12)
        assert r[task]["wd,none"] == pytest.approx(0.0, abs=1e-12)
        assert r[task]["re,none"] == pytest.approx(0.0, abs=1e-12)
    for task in ("ub_calibration_colors", "ub_calibration_wordproblems"):  # two options: a behaviour each
        assert r[task]["behaviour_calibrated,none"] == 1.0 and r[task]["behaviour_pick_first,none"] == 0.0
    assert math.isnan(r["ub_calibration_distributions"]["behaviour_calibrated,none"])  # three options: none
    for cat in ("dice", "coins", "preference", "choice", "statistics"):
        row = r[f"ub_implicit_{cat}"]
        assert row["kl,none"] == pytest.approx(0.0, abs=1e-12)
        assert row["chebyshev,none"] == pytest.approx(0.0, abs=1e-12)
        assert row["missing_mass,none"] == pytest.approx(0.0, abs=1e-12)
        assert r[f"ub_explicit_{cat}"]["mcq_acc,none"] == 1.0
        assert r[f"ub_explicit_{cat}"]["p_correct,none"] == pytest.approx(1.0)
    # argmax accuracy only where the mode is unique: coins, preference, statistics; NaN where no item has one
    assert r["ub_implicit_coins"]["argmax_acc,none"] == 1.0
    assert math.isnan(r["ub_implicit_dice"]["argmax_acc,none"])
    assert r["ub_calibration"]["pm,none"] == pytest.approx(1.0) and r["ub_implicit"]["kl,none"] == pytest.approx(0.0)
    assert r["ub_explicit"]["mcq_acc,none"] == 1.0
    # what a logged sample carries for the report
    s = res["samples"]["ub_calibration_colors"][0]
    ub = s["doc"]["ub_sample"]  # the lists ride with the doc, out of the results
    assert ub["option_mass"] == pytest.approx([0.3, 0.7]) and ub["predicted"] == pytest.approx([0.3, 0.7])
    assert len(s["resps"]) == 12  # one log-likelihood per surface variant (6 per colour)
    json.dumps(res["results"])


@pytest.mark.slow
def test_lmeval_collapse_and_size_metadata(task_manager):
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    res = simple_evaluate(model="ub-collapse", tasks=["ub_calibration_colors", "ub_implicit_coins"],
                          task_manager=task_manager)
    r = res["results"]
    # (with two options pick-first coincides with pick-higher or pick-lower, so the behaviour is not asserted)
    assert r["ub_calibration_colors"]["pm,none"] == pytest.approx(1.0) and r["ub_calibration_colors"]["wd,none"] > 0
    assert r["ub_implicit_coins"]["chebyshev,none"] == pytest.approx(0.75)  # (1, 0, 0) vs (1/4, 1/2, 1/4)
    full = ub_task_manager({"size": "full"})
    res = simple_evaluate(model="ub-oracle", tasks=["ub_calibration_colors"], task_manager=full)
    assert res["n-samples"]["ub_calibration_colors"]["effective"] == 3


@pytest.mark.slow
def test_lmeval_tiny_hf_model_end_to_end(tiny_llama):
    """A real (untrained) local model through lm-eval's hf backend; the tokenizer reaches custom_dataset
    through the metadata (as the CLI passes model_args), so variants are deduplicated by token ids."""
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    path = str(tiny_llama)
    tm = ub_task_manager({"pretrained": path})
    res = simple_evaluate(model="hf", model_args=f"pretrained={path},dtype=float32", tasks=["ub_calibration_colors"],
                          task_manager=tm, device="cpu", batch_size=16, log_samples=True)
    row = res["results"]["ub_calibration_colors"]
    assert 0.0 < row["pm,none"] <= 1.0
    for key in ("wd", "re"):
        assert math.isfinite(row[f"{key},none"])
    sample = res["samples"]["ub_calibration_colors"][0]
    assert sample["doc"]["dedup"] == "token_ids"
    ub = sample["doc"]["ub_sample"]
    assert 0.0 < sum(ub["option_mass"]) <= 1.0 and sum(ub["predicted"]) == pytest.approx(1.0)


def test_continuation_token_ids_match_lm_eval_encode_pair(tiny_llama):
    from transformers import AutoTokenizer

    from ub_lmeval.option_logprob_hooks import continuation_token_ids

    tok = AutoTokenizer.from_pretrained(str(tiny_llama))
    ctx = "the value is"
    for cont in (" 42", "42", " Value"):
        whole = tok.encode(ctx + cont)
        assert continuation_token_ids(tok, ctx, cont) == whole[len(tok.encode(ctx)):]


# ------------------------------------------------------------------------------------------------ Inspect

inspect_ai = pytest.importorskip("inspect_ai")


def _inspect_run(task, model, tmp_path):
    from inspect_ai import eval as inspect_eval

    logs = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    return logs[0]


def _m(log, name):
    (score,) = log.results.scores  # every run metric in one score (ub_inspect.metrics)
    return score.metrics[name].value


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["prompt_logprobs", "top_logprobs"])
def test_inspect_oracle_is_the_ceiling(tmp_path, mode):
    """All three tasks in one eval() call (prompt_logprobs: one request per variant; top_logprobs: one per item)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from ub_inspect.calibration import calibration
    from ub_inspect.explicit import explicit
    from ub_inspect.implicit import implicit

    logs = inspect_eval([calibration(mode=mode, categories="colors,distributions"),
                         implicit(mode=mode, categories="coins,dice"),
                         explicit(mode=mode, categories="coins,preference")],
                        model="ub/oracle", log_dir=str(tmp_path), display="none")
    cal, imp, exp = sorted(logs, key=lambda lg: ["calibration", "implicit", "explicit"].index(
        lg.eval.task.split("/")[-1]))
    for log in logs:
        assert log.status == "success", log.error
    assert _m(cal, "pm") == pytest.approx(1.0) and _m(cal, "wd") == pytest.approx(0.0, abs=1e-12)
    assert _m(cal, "re") == pytest.approx(0.0, abs=1e-12) and _m(cal, "behaviour_calibrated") == 1.0
    back = read_eval_log(cal.location)
    meta = back.samples[0].scores["calibration_scorer"].metadata["ub"]
    assert meta["option_mass"] == pytest.approx(list(meta["probabilities"]))
    assert meta["predicted"] == pytest.approx(list(meta["probabilities"])) and meta["mode"] == mode
    assert _m(imp, "kl") == pytest.approx(0.0, abs=1e-12) and _m(imp, "argmax_acc") == 1.0  # dice: no mode
    assert len(imp.samples) == 2
    assert _m(exp, "mcq_acc") == 1.0 and _m(exp, "p_correct") == pytest.approx(1.0)


def test_inspect_provider_without_logprobs_gets_one_line_error(tmp_path):
    from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, GenerateConfig, ModelAPI, ModelOutput,
                                  ModelUsage, modelapi)

    from ub_inspect.calibration import calibration

    class _Plain(ModelAPI):
        def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **kw):
            super().__init__(model_name, base_url, api_key, [], config)

        async def generate(self, input, tools, tool_choice, config):
            return ModelOutput(model="plain", choices=[ChatCompletionChoice(
                message=ChatMessageAssistant(content=" red", source="generate"), stop_reason="stop")],
                usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))

    modelapi(name="ublogittest")(lambda: _Plain)
    for mode in ("prompt_logprobs", "top_logprobs"):
        log = _inspect_run(calibration(mode=mode, limit_per_category=1), "ublogittest/plain", tmp_path)
        assert log.status == "error"
        message = log.error.message
        assert f"returned no {mode}" in message and "\n" not in message.strip()


def test_prompt_logprobs_suffix_reading():
    from ub_inspect.option_logprob import LogprobsUnavailableError, variant_logprob_from_prompt_logprobs

    tok = [SimpleNamespace(token=t, logprob=lp) for t, lp in (("It", -1.0), (" is", -2.0), (" re", -0.5),
                                                              ("d", -0.25))]
    assert variant_logprob_from_prompt_logprobs(tok, " red") == (-0.75, False)
    assert variant_logprob_from_prompt_logprobs(tok, "red") == (-0.75, True)  # " re" straddles the boundary
    spm = [SimpleNamespace(token=t, logprob=lp) for t, lp in (("\u2581is", -2.0), ("\u2581Red", -0.5))]
    assert variant_logprob_from_prompt_logprobs(spm, " Red") == (-0.5, False)  # SentencePiece space marker
    with pytest.raises(LogprobsUnavailableError, match="chat template"):
        variant_logprob_from_prompt_logprobs(tok + [SimpleNamespace(token="\nassistant:", logprob=0.0)], " red")


# ------------------------------------------------------------------------------------------------ parity

def test_parity_same_logprobs_same_scores_in_both_adapters():
    """Recorded log-probabilities (random, fixed seed, some variants unobserved) through lm-eval's
    process_results + nanmean and through the Inspect solver store + scorer + nan_mean: identical numbers."""
    from inspect_ai.model import ModelName
    from inspect_ai.scorer import SampleScore
    from inspect_ai.solver import TaskState

    from ub_inspect.option_logprob import (OptionLogprobs, calibration_scorer, explicit_scorer, implicit_scorer,
                                           nan_mean, record_to_sample)
    from ub_lmeval.option_logprob_hooks import nanmean, option_logprob_docs, process_results_option_logprob

    rng = np.random.default_rng(0)
    scorers = {"calibration": calibration_scorer(), "implicit": implicit_scorer(), "explicit": explicit_scorer()}
    for bank, loader in (("calibration", _calibration), ("implicit", _implicit), ("explicit", _explicit)):
        docs = {d["id"]: d for d in option_logprob_docs(bank)}
        lm_rows, inspect_scores = [], []
        for item in loader():
            doc = docs[item.id]
            lps = [float(x) if rng.random() > 0.2 else -math.inf for x in np.log(rng.random(len(doc["choices"])) / 8)]
            lm_rows.append({**process_results_option_logprob(doc, [(lp, False) for lp in lps]), **doc["ub_sample"]})
            sample = record_to_sample(item)
            state = TaskState(model=ModelName("ub/oracle"), sample_id=item.id, epoch=1, input=item.prompt,
                              messages=[], metadata=sample.metadata)
            record = state.store_as(OptionLogprobs)
            record.mode, record.choices = "prompt_logprobs", list(doc["choices"])
            record.logprobs = [None if lp == -math.inf else lp for lp in lps]
            inspect_scores.append(asyncio.run(scorers[bank](state, None)))
        for lm, sc in zip(lm_rows, inspect_scores):
            for key in METRIC_KEYS[bank]:
                a, b = lm[key], sc.value[key]
                assert (math.isnan(a) and math.isnan(b)) or a == b, (bank, key)
            assert lm["option_mass"] == sc.metadata["ub"]["option_mass"]
            assert lm["predicted"] == sc.metadata["ub"]["predicted"]
        for key in METRIC_KEYS[bank]:
            agg_lm = nanmean([r[key] for r in lm_rows])
            agg_in = nan_mean()([SampleScore(score=type(s)(value=s.value[key]), sample_id=i)
                                 for i, s in enumerate(inspect_scores)])
            assert (math.isnan(agg_lm) and math.isnan(agg_in)) or agg_lm == pytest.approx(agg_in, rel=1e-12), key
