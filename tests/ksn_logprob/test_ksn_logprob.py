"""Sampling-free KS@N in both frameworks: ub_core.logprob.ksn_logprob, ub_inspect/ksn_logprob, ub_ksn_logprob.

The oracle gives every candidate its true log-probability (q = p: ks_distance 0, p_pass@100 the truth's own pass
rate, >= 0.98); the collapsed model puts all mass on one answer (ks_distance large). Chat templates: the prompt is
rendered as one user message and the candidate follows with no delimiter (lm-eval's --apply_chat_template rule),
checked against a real tokenizer with a template."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ub_core.logprob.ksn_logprob import (CHAT_DELIMITER, METRIC_KEYS, OFFLINE_EOS, RAW_DELIMITER,
                                         candidate_continuations, candidate_record, combine_end_logprobs, end_texts,
                                         oracle_candidate_logprob, render_chat, score_candidate_logprobs,
                                         split_candidate_text)
from ub_core.metric_spec import metric_keys, run_specs
from ub_core.problems.candidates import enumerable_problems
from ub_core.problems import get_problem, load_bank
from ub_core.problems.candidates import candidate_set
from support.lmeval_tasks import LMEVAL_AGGREGATION, load_task_yaml

ROOT = Path(__file__).resolve().parents[2]
# one problem of each candidate kind: a small discrete support, a cut infinite one, a label problem, a shuffle
IDS = ("te-bernoulli-spread", "te-poisson-conc", "rw-mcmc-01", "sh-integer-06")


def _oracle_lps(problem, mode="oracle"):
    return [oracle_candidate_logprob(problem, RAW_DELIMITER + t, mode) for t in candidate_set(problem).texts]


@pytest.mark.parametrize("pid", IDS)
def test_oracle_scores_the_ceiling_and_collapse_is_far(pid):
    p = get_problem(pid)
    scores, payload = score_candidate_logprobs(p, _oracle_lps(p))
    assert tuple(scores) == METRIC_KEYS
    assert scores["ks_distance"] <= 1e-9 and scores["jsd"] <= 1e-9 and scores["valid_mass"] == pytest.approx(1)
    assert scores["p_pass@100"] >= 0.98 and scores["entropy_ratio"] == pytest.approx(1) and scores["no_mass"] == 0
    assert payload["q"] == pytest.approx(list(candidate_set(p).p / candidate_set(p).p.sum()))
    collapsed, _ = score_candidate_logprobs(p, _oracle_lps(p, "collapse"))
    assert collapsed["ks_distance"] >= 0.3 and collapsed["entropy_ratio"] == 0.0


def test_collapse_puts_its_mass_on_the_answer_ub_collapse_repeats():
    from ub_core.oracle import collapse_replies

    for pid in IDS:
        p = get_problem(pid)
        (reply,) = collapse_replies(p, 1)
        assert oracle_candidate_logprob(p, " " + reply, "collapse") == 0.0
        assert sum(lp == 0.0 for lp in _oracle_lps(p, "collapse")) == 1


def test_candidate_text_and_delimiters():
    p = get_problem("te-bernoulli-spread")
    assert split_candidate_text(p, " {1}") == (1, "") and split_candidate_text(p, "{1}", CHAT_DELIMITER) == (1, "")
    assert split_candidate_text(p, " {1}" + OFFLINE_EOS) == (1, OFFLINE_EOS)
    # the offline models' reply is exactly one candidate: followed by their EOS it has the candidate's probability,
    # followed by anything else (lm-eval's "\n\n" stop, more text) none
    assert oracle_candidate_logprob(p, " {1}" + OFFLINE_EOS) == oracle_candidate_logprob(p, " {1}") == math.log(0.5)
    for cont in (" {1}\n\n", " {1} ", " {1} {1, 2}" + OFFLINE_EOS):
        assert oracle_candidate_logprob(p, cont) == -math.inf, cont
    # not a candidate: wrong delimiter, another answer
    for cont in ("{1}", " 1", " {2}", ""):
        assert split_candidate_text(p, cont) is None, cont
        assert oracle_candidate_logprob(p, cont) == -math.inf
    with pytest.raises(ValueError, match="unknown mode"):
        oracle_candidate_logprob(p, " {1}", "sampler")


def test_wrong_count_and_no_mass_are_counted():
    p = get_problem("rw-mcmc-01")
    n = len(candidate_set(p))
    scores, payload = score_candidate_logprobs(p, [0.0] * (n + 1))
    assert scores["bad_logprobs"] == 1.0 and "log-probabilities for" in payload["bad_logprobs"]
    scores, payload = score_candidate_logprobs(p, [None] * n)  # nothing observed: no answer distribution
    assert scores["valid_mass"] == 0.0 and payload["q"] is None
    assert scores["bad_logprobs"] == 0.0
    assert all(math.isnan(scores[k]) for k in ("ks_distance", "jsd", "entropy_ratio"))
    # all the mass is unlisted, so it may be valid: the bounds are wide, the problem unresolved (left out of the
    # means and counted), not a sure fail
    assert scores["unresolved"] == 1.0 and scores["no_mass"] == 0.0 and math.isnan(scores["p_pass@100"])
    lo, hi = payload["p_pass_bounds@100"]
    assert lo == 0.0 and hi > 0.9
    with pytest.raises(ValueError, match="cannot be listed"):
        candidate_record(get_problem("te-normal-conc"))


def test_end_texts_and_candidate_continuations():
    assert end_texts("none") == ("",)
    assert end_texts("eos", "</s>", ("\n\n",)) == ("</s>", "\n\n")
    assert end_texts("<|im_end|>", None, ("\n\n", "<|im_end|>")) == ("<|im_end|>", "\n\n")
    with pytest.raises(ValueError, match="no end-of-sequence token"):
        end_texts("eos", None)
    assert candidate_continuations(["{0}", "{1}"], " ", ("</s>", "\n\n")) == [
        " {0}</s>", " {0}\n\n", " {1}</s>", " {1}\n\n"]
    # candidate-major log-sum-exp over the ends; a malformed entry passes through to be named
    assert combine_end_logprobs([math.log(0.2), math.log(0.1), -math.inf, None], 2, 2) == pytest.approx(
        [math.log(0.3), -math.inf])
    assert math.isnan(combine_end_logprobs([float("nan"), -1.0], 1, 2)[0])


def test_p_pass_models_the_retry_protocol():
    """p_pass@N = P(Binomial(S, 1 - (1 - V)^A) >= N) x P(pass | N valid answers), checked against a simulation of
    the slot protocol (S slots, A attempts each, a slot skipped after A invalid replies): 20,000 simulated runs,
    so the simulated share is within 5 standard errors (sd <= 0.0036) of the formula with probability > 1 - 1e-6."""
    import numpy as np

    from ub_core.metrics import p_enough_valid

    rng = np.random.default_rng(25)
    for valid, attempts, n in ((0.5, 5, 100), (0.5, 1, 50), (0.8, 1, 80), (0.3, 5, 90)):
        invalid_runs = rng.random((20_000, 100, attempts)) >= valid  # True: that attempt's reply is invalid
        filled = (~invalid_runs).any(axis=2).sum(axis=1)
        share = float(np.mean(filled >= n))
        expected = p_enough_valid(valid, n, 100, attempts)
        assert abs(share - expected) <= 5 * math.sqrt(max(expected * (1 - expected), 1e-4) / 20_000), (
            valid, attempts, n, share, expected)
    assert p_enough_valid(1.0, 100) == 1.0 and p_enough_valid(0.0, 1) == 0.0 and p_enough_valid(0.9, 101) == 0.0
    assert math.isnan(p_enough_valid(float("nan"), 5))
    p = get_problem("te-bernoulli-spread")
    half = [math.log(0.25), math.log(0.25)]  # valid mass 0.5, q = p
    inspect_like, payload = score_candidate_logprobs(p, half, slots=100, max_attempts=5)
    def point(scores, payload, n):  # half the mass unlisted: wide bounds, so the point rides in the payload
        return payload.get(f"p_pass_unresolved@{n}", scores[f"p_pass@{n}"])

    for n in (1, 50, 100):
        assert point(inspect_like, payload, n) == pytest.approx(
            p_enough_valid(0.5, n, 100, 5) * payload[f"p_pass_given_valid@{n}"])
    lmeval_like, lmeval_payload = score_candidate_logprobs(p, half, slots=100, max_attempts=1)
    assert point(lmeval_like, lmeval_payload, 100) < 1e-20 < point(inspect_like, payload, 100)


def test_every_enumerable_problem_has_a_record_and_no_other_does():
    bank = load_bank("ksn")
    rows = enumerable_problems(bank)
    assert len(rows) == sum(candidate_set(p) is not None for p in bank) == 175
    rec = candidate_record(*rows[0])
    assert rec["prompt"] == rows[0][0].full_prompt and len(rec["candidates"]) == len(rec["p"]) == len(rec["values"])


class _Tok:
    """A tokenizer stand-in with a template that writes the BOS token (as Llama 3's does)."""

    bos_token = "<s>"

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        assert tokenize is False and add_generation_prompt is True
        return "<s>[USER] " + messages[0]["content"] + " [/USER]"


def test_render_chat_drops_the_template_bos_the_server_adds_again():
    assert render_chat(_Tok(), "How many?") == "[USER] How many? [/USER]"


def test_render_chat_with_a_real_template(tiny_trained_model):
    from support.tiny_trained import chat_text
    from ub_core.logprob.ksn_logprob import load_chat_tokenizer

    tok = load_chat_tokenizer(str(tiny_trained_model))
    prompt = get_problem("te-bernoulli-spread").full_prompt
    assert render_chat(tok, prompt) == chat_text(prompt)
    with pytest.raises(ValueError, match="cannot load the tokenizer"):
        load_chat_tokenizer(str(tiny_trained_model) + "-missing")


# ------------------------------------------------------------------------------------------------ Inspect

def _inspect(model, tmp_path, **kw):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob import ksn_logprob

    log = inspect_eval(ksn_logprob(ids=",".join(IDS), **kw), model=model, log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    return log


def _metric(log, key):
    (score,) = log.results.scores  # every run metric in one score (ub_inspect.metrics)
    return score.metrics[key].value


@pytest.mark.slow
def test_inspect_oracle_and_collapse(tmp_path):
    log = _inspect("ub/oracle", tmp_path)
    assert _metric(log, "ks_distance") <= 0.01 and _metric(log, "p_pass@100") >= 0.98
    assert _metric(log, "valid_mass") == pytest.approx(1.0)
    for s in log.samples:
        ub = s.scores["ksn_logprob_scorer"].metadata["ub"]
        # renormalised: cut tails hold <= 1e-6
        assert ub["context"] == "raw" and ub["delimiter"] == " " and ub["q"] == pytest.approx(ub["p"], rel=1.01e-6)
    log = _inspect("ub/collapse", tmp_path)
    assert _metric(log, "ks_distance") >= 0.3 and _metric(log, "entropy_ratio") == 0.0


def test_inspect_options_give_one_line_errors():
    from ub_inspect.ksn_logprob import ksn_logprob

    with pytest.raises(ValueError, match="option draws: expected an integer >= 2000"):
        ksn_logprob(draws=100)
    with pytest.raises(ValueError, match="option chat_template"):
        ksn_logprob(chat_template=" ")
    with pytest.raises(ValueError, match="ids: not among the selected items: te-normal-conc"):
        ksn_logprob(ids="te-normal-conc", enumeration="listed")  # continuous: no listed support


def test_inspect_chat_template_that_cannot_load_fails_the_run_with_one_line(tmp_path):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn_logprob import ksn_logprob

    log = inspect_eval(ksn_logprob(ids=IDS[0], chat_template=str(tmp_path / "nothing")), model="ub/oracle",
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "error" and "chat_template: cannot load the tokenizer" in log.error.message


# ------------------------------------------------------------------------------------------------ lm-eval

def _lmeval(model, chat=False, model_args=""):
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    tm = ub_task_manager({"ids": ",".join(IDS)})
    return simple_evaluate(model=model, model_args=model_args, tasks=["ub_ksn_logprob"], task_manager=tm,
                           log_samples=True, apply_chat_template=chat)


@pytest.mark.slow
@pytest.mark.parametrize("chat", [False, True])
def test_lmeval_oracle_and_collapse(chat):
    res = _lmeval("ub-oracle", chat)
    group = res["results"]["ub_ksn_logprob"]
    # the group averages the rates only (ub_lmeval.metric_lists): a distance is a mean over the defined values
    assert group["p_pass@100,none"] >= 0.98 and "ks_distance,none" not in group
    assert max(_task_values(res, "ks_distance")) <= 0.01
    samples = [s for task in res["samples"].values() for s in task]
    assert sorted(s["doc"]["id"] for s in samples) == sorted(IDS)
    for s in samples:  # raw: " {k}" after the prompt; chat: "{k}" as the start of the reply
        assert all(a[1].startswith("{" if chat else " {") for a in s["arguments"])
    res = _lmeval("ub-collapse", chat)
    assert min(_task_values(res, "ks_distance")) >= 0.3


def _task_values(res, key):
    """``key`` of every task of the run that had documents."""
    return [r[f"{key},none"] for task, r in res["results"].items()
            if task != "ub_ksn_logprob" and isinstance(r.get(f"{key},none"), float)
            and not math.isnan(r[f"{key},none"])]


def test_lmeval_hooks_report_exactly_the_spec_keys():
    from ub_lmeval.ksn_logprob_hooks import ksn_logprob_docs, process_results_ksn_logprob

    (doc,) = ksn_logprob_docs("real_world", ids="rw-mcmc-01")
    p = get_problem(doc["id"])
    assert doc["ends"] == [""] and doc["choices"] == doc["candidates"]  # no tokenizer named: reply prefixes
    row = process_results_ksn_logprob(doc, [(lp, False) for lp in _oracle_lps(p)])
    assert tuple(k for k in row if k != "q") == metric_keys("ksn_logprob", "lmeval")
    assert row["bad_logprobs"] == 0.0 and row["ks_distance"] <= 1e-9
    # malformed results from any model (lm-eval's dummy gives random floats, a broken server NaN or None) are a
    # counted item, not an aborted run
    for results in ([(0.0, False)], [(float("nan"), False)] * 3, [(None, False)] * 3, [(7.0, True)] * 3, []):
        row = process_results_ksn_logprob(doc, results)
        assert row["bad_logprobs"] == 1.0 and math.isnan(row["ks_distance"]) and row["p_pass@100"] == 0.0, results


def test_lmeval_docs_score_each_candidate_followed_by_each_reply_end(tiny_trained_model):
    """With a tokenizer in --model_args, every candidate is followed by its EOS text and by ub_ksn's "\n\n" stop;
    process_results adds the two (the reply ends one way or the other)."""
    from ub_lmeval.ksn_logprob_hooks import ksn_logprob_dataset, process_results_ksn_logprob

    doc = ksn_logprob_dataset("text_explicit", ids="te-bernoulli-spread", pretrained=str(tiny_trained_model))["test"][0]
    assert doc["ends"] == ["</s>", "\n\n"]
    assert doc["choices"] == ["{0}</s>", "{0}\n\n", "{1}</s>", "{1}\n\n"]
    row = process_results_ksn_logprob(doc, [(math.log(x), False) for x in (0.3, 0.1, 0.4, 0.2)])
    assert row["valid_mass"] == pytest.approx(1.0) and doc["ub_sample"]["q"] == pytest.approx([0.4, 0.6])
    explicit = ksn_logprob_dataset("text_explicit", ids="te-bernoulli-spread", end_of_answer="none")["test"][0]
    assert explicit["choices"] == ["{0}", "{1}"]


def test_yaml_metric_list_equals_the_spec_and_categories_match_the_bank():
    from ub_core.problems.ksn import CATEGORIES

    folder = ROOT / "ub_lmeval/task_yamls/ksn_logprob"
    doc = load_task_yaml(folder / "_ub_ksn_logprob_template_yaml")
    listed = [(m["metric"], m["aggregation"], m["higher_is_better"]) for m in doc["metric_list"]]
    assert listed == [(k, f"!function utils.{m.lmeval_aggregation}" if m.lmeval_aggregation
                       else LMEVAL_AGGREGATION[m.aggregation], m.higher_is_better)
                      # q goes to the sample log, not the results
                      for k, m in run_specs("ksn_logprob", adapter="lmeval")]
    group = load_task_yaml(folder / "ub_ksn_logprob.yaml")
    assert group["task"] == [f"ub_ksn_logprob_{c}" for c in CATEGORIES]


def test_lmeval_hf_chat_template_scores_the_reply_start(tiny_trained_model, monkeypatch):
    """lm-eval's hf backend with --apply_chat_template on a tokenizer with a template: each candidate's
    log-likelihood is that of "{k}" then the end of the reply (EOS, or the "\n\n" stop) right after the rendered
    prompt, as computed here from the model's logits (the tokenizer reads "</s>" as the EOS token)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pid = "te-bernoulli-spread"
    from lm_eval import simple_evaluate
    from support.lmeval_tasks import ub_task_manager

    # the CLI merges --model_args into the task metadata (lm_eval/config/evaluate_config.py); here by hand
    tm = ub_task_manager({"ids": pid, "pretrained": str(tiny_trained_model)})
    res = simple_evaluate(model="hf", model_args=f"pretrained={tiny_trained_model},dtype=float32", device="cpu",
                          tasks=["ub_ksn_logprob_text_explicit"], task_manager=tm, apply_chat_template=True,
                          log_samples=True, batch_size=4)
    (sample,) = res["samples"]["ub_ksn_logprob_text_explicit"]
    tok = AutoTokenizer.from_pretrained(str(tiny_trained_model))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_trained_model), torch_dtype=torch.float32).eval()
    context = render_chat(tok, get_problem(pid).full_prompt)
    for (ctx, cont), resp in zip((a for a in sample["arguments"]), sample["resps"]):
        assert cont in ("{0}</s>", "{1}</s>", "{0}\n\n", "{1}\n\n") and ctx.endswith(context)
        ids_ctx = tok(ctx)["input_ids"]
        ids_all = tok(ctx + cont)["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids_all])).logits[0].float(), -1)
        want = sum(logp[i - 1, ids_all[i]].item() for i in range(len(ids_ctx), len(ids_all)))
        assert resp[0][0] == pytest.approx(want, abs=1e-4)


# ------------------------------------------------------------------------------------------------ report

@pytest.mark.slow
def test_report_shows_predicted_vs_sampled_and_q_vs_truth(tmp_path):
    """ub report: a sampling-free run and a KS@N run of one model give the means table, the predicted-vs-sampled
    table (for ub/collapse both are exact: its one answer passes KS@N with probability 0 or 1) and a q-vs-truth
    figure per category."""
    import json

    from inspect_ai import eval as inspect_eval

    from ub_core.report import build_report
    from ub_inspect.ksn import ksn
    from ub_inspect.ksn_logprob import ksn_logprob

    logs = tmp_path / "logs"
    for task in (ksn_logprob(ids=",".join(IDS)), ksn(ids=",".join(IDS))):
        assert inspect_eval(task, model="ub/collapse", log_dir=str(logs), display="none")[0].status == "success"
    build_report([logs], tmp_path / "out")
    summary = json.loads((tmp_path / "out/summary.json").read_text())
    assert summary["tables"]["ksn_logprob_by_category"]["family"] == "ksn_logprob"
    rows = [r for r in summary["tables"]["ksn_logprob_vs_sampled"]["rows"] if r["category"] == "all"]
    assert {r["N"] for r in rows} == {1, 2, 5, 10, 20, 50, 100}
    for r in rows:
        assert r["problems"] == len(IDS) and r["predicted_p_pass"] == pytest.approx(r["sampled_ks_pass"]), r
    figures = sorted(p.name for p in (tmp_path / "out/ksn_logprob").glob("*.png"))
    # one figure per category (text_explicit has two of IDS: the one furthest from the truth is drawn)
    assert len(figures) == 3 and {"rw-mcmc-01.png", "sh-integer-06.png"} <= set(figures)
    assert set(figures) <= {f"{pid}.png" for pid in IDS}
