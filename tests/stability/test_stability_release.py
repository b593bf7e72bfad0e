"""convention="release" of the stability family: the rules of the paper's public release
(llm-stability, evaluate.py) reproduced, quirks included, in ub_core, the Inspect task, the lm-eval hooks and
``ub stability score``; each quirk pinned by a hand case first."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from ub_core.metrics import (AMBIGUOUS, MISSING, accuracy_spread, best_minus_worst, correctness,  # noqa: E402
                             release_answers_agree, stability_summary)
from ub_core.parsing.mcq import read_mcq  # noqa: E402
from ub_core.parsing.release_mcq import read_release  # noqa: E402
from ub_core.problems.stability import find_stability_item, load_stability_items  # noqa: E402
from ub_core.stability_score import score_lines  # noqa: E402

FOUR = ["circle", "kite", "line", "sector"]


# ------------------------------------------------------------------------------------------------ the quirks

def test_bare_a_is_choice_a_under_release_not_under_paper():
    reply = "The figure drawn is a closed shape with one curved side."
    assert read_release(reply, FOUR).letter == "A"  # the article 'a' as a word: choice A
    assert read_mcq(reply, FOUR).letter is None  # a person reads no choice
    # ... and the pronoun I is choice I among geometric_shapes' eleven letters, next to the article: ambiguous
    both = read_release("I think it is a circle", 10, "geometric_shapes")
    assert both.outcome == "ambiguous" and "A, I" in both.reason
    # so the two conventions disagree on TARa and accuracy of the same replies
    raws = [["ANSWER: A"], [reply]]
    rel = stability_summary(raws, [[read_release(r[0], FOUR).value] for r in raws], ["A"], "release")
    pap = stability_summary(raws, [[read_mcq(r[0], FOUR).letter] for r in raws], ["A"], "paper")
    assert (rel["tar_a"], rel["worst_acc"]) == (1.0, 1.0) and (pap["tar_a"], pap["worst_acc"]) == (0.0, 0.0)


def test_ambiguous_reply_disagrees_with_everything_even_itself():
    amb = read_release("Both (A) and (B) are possible.", FOUR)
    assert amb.outcome == "ambiguous" and amb.value == AMBIGUOUS and amb.letter is None
    assert not release_answers_agree([AMBIGUOUS, AMBIGUOUS])
    assert not release_answers_agree(["A", AMBIGUOUS, "A"])
    # no answer agrees with no answer (the release adds one token for the first), not with a letter
    assert release_answers_agree([None, None, None]) and not release_answers_agree([None, "A"])
    # an empty reply (a NaN cell for the release's pandas) is left out; all empty agrees with nothing
    assert release_answers_agree(["B", MISSING, "B"]) and not release_answers_agree([MISSING, MISSING])
    # under the paper convention the same ambiguous replies are unreadable, and unreadable agrees with unreadable
    paper = [read_mcq("Both (A) and (B) are possible.", FOUR).letter] * 2
    assert paper == [None, None]
    raw = [["x"], ["x"]]
    assert stability_summary(raw, [[p] for p in paper], ["A"], "paper")["tar_a"] == 1.0
    assert stability_summary(raw, [[AMBIGUOUS], [AMBIGUOUS]], ["A"], "release")["tar_a"] == 0.0


def test_spread_is_best_minus_worst_under_release_max_minus_min_under_paper():
    # 3 runs x 4 questions: every run gets 2 right, but different ones
    parsed = [["A", "A", "B", "B"], ["B", "A", "A", "B"], ["A", "B", "A", "B"]]
    gold = ["A", "A", "A", "A"]
    c = correctness(parsed, gold)
    assert accuracy_spread(c) == 0.0  # every run 2 of 4
    assert best_minus_worst(c) == 0.75  # questions 1-3 right in some run and wrong in another
    raw = [["r"] * 4] * 3
    assert stability_summary(raw, parsed, gold, "paper")["acc_spread"] == 0.0
    assert stability_summary(raw, parsed, gold, "release")["acc_spread"] == 0.75
    with pytest.raises(ValueError, match="convention must be one of paper, release"):
        stability_summary(raw, parsed, gold, "code")


def test_release_reading_order_and_navigate_words():
    # salience: the last line decides before the whole reply
    assert read_release("(A) looks tempting\n(B) is wrong\nso (C)", FOUR).letter == "C"
    # within a level, 'the answer is (X)' beats a plain (Y)
    assert read_release("The answer is (B), not (C).", FOUR).letter == "B"
    # the last three lines are one level: two letters there is ambiguous, although the last line names one
    assert read_release("x\n(A) is out\n(B) then\nso it is", FOUR).outcome == "ambiguous"
    assert read_release("nothing here", FOUR).outcome == "no answer"
    assert read_release("", FOUR).outcome == "missing" and read_release(None, FOUR).outcome == "missing"
    # navigate: the whole reply, exact words before any case; both words in one test is ambiguous
    assert read_release("So, no, we don't return. No.", ["Yes", "No"]).letter == "B"
    assert read_release("Yes we return; no doubt", ["Yes", "No"]).letter == "A"  # exact 'Yes' before any-case 'no'
    assert read_release("Yes or No?", ["Yes", "No"]).outcome == "ambiguous"
    assert read_release("ANSWER: B", 4).letter == "B"  # the letter words are whole words, not 'ANSWER'


def test_the_reader_is_total_and_linear():
    for bad in (b"(A)", 3, ["(A)"], "\x00" * 10, "(" * 100_000):
        assert read_release(bad, FOUR).outcome in ("missing", "no answer", "ambiguous", "read")
    assert read_release("x", "not options").outcome == "no answer"
    long = "word " * 200_000 + "\nThe answer is (D)"
    assert read_release(long, FOUR).letter == "D"


# ------------------------------------------------------------------------------------------------ end to end

N_RUNS = 5  # lm-eval's ub_tar YAMLs repeat each question 5 times; Inspect runs 5 epochs to match
SUBTASKS = ["navigate", "college_mathematics", "geometric_shapes"]
LIMIT = 3
BARE_A_REPLY = "It is a guess."


def scripted_reply(item, run: int) -> str:
    """Question k of its subtask: k % 3 == 0 answers right every run; == 1 is ambiguous every run (two options);
    == 2 answers right but, in the last run, only says "It is a guess." (the release reads a bare 'a' as A).
    navigate answers with the option's word, as the release reads navigate by its words Yes / No."""
    k = int(item.id.rsplit("_", 1)[1])
    navigate = item.category == "navigate"
    if k % 3 == 1:
        return "Yes or No: I cannot tell." if navigate else "Both (A) and (B) look right to me."
    if k % 3 == 2 and run == N_RUNS - 1:
        return BARE_A_REPLY
    return f"The answer is {item.options['AB'.index(item.answer)]}." if navigate else f"ANSWER: {item.answer}"


def _items(subtasks=SUBTASKS):
    return [it for s in subtasks for it in load_stability_items([s], "builtin", limit=LIMIT)]


def expected(items, convention: str) -> dict[str, float]:
    """The metrics of :func:`scripted_reply` on ``items``, derived by hand from the rules (not by the code under
    test)."""
    tar_a, best, worst = 0, 0, 0
    run_right = [0] * N_RUNS
    for it in items:
        k = int(it.id.rsplit("_", 1)[1]) % 3
        if k == 0:
            tar_a, best, worst = tar_a + 1, best + 1, worst + 1
            run_right = [x + 1 for x in run_right]
        elif k == 1:  # paper: unreadable every run, which agrees; release: ambiguous, which never agrees
            tar_a += convention == "paper"
        else:  # right .. right, "It is a guess." -> paper unreadable; release 'A' (navigate: no Yes/No word)
            last_right = convention == "release" and it.answer == "A" and it.category != "navigate"
            tar_a += last_right
            best, worst = best + 1, worst + last_right
            run_right = [x + 1 for x in run_right[:-1]] + [run_right[-1] + last_right]
    q = len(items)
    accs = [r / q for r in run_right]
    spread = (best - worst) / q if convention == "release" else max(accs) - min(accs)
    return {"tar_r": sum(int(it.id.rsplit("_", 1)[1]) % 3 != 2 for it in items) / q, "tar_a": tar_a / q,
            "best_acc": best / q, "worst_acc": worst / q, "acc_spread": spread}


def test_the_script_tells_the_conventions_apart():
    paper, release = expected(_items(), "paper"), expected(_items(), "release")
    assert paper["tar_a"] != release["tar_a"] and paper["acc_spread"] != release["acc_spread"]
    assert 0 < release["tar_a"] < 1


from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, GenerateConfig, ModelAPI,  # noqa: E402
                              ModelOutput, ModelUsage, get_model, modelapi)

from ub_inspect.stability import stability  # noqa: E402


class _ScriptedAPI(ModelAPI):
    """Test-only: :func:`scripted_reply`, the run being the sample's epoch (Inspect's active-sample context)."""

    def __init__(self, model_name: str, base_url=None, api_key=None, config: GenerateConfig = GenerateConfig(),
                 **kw):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        from inspect_ai.log._samples import sample_active

        reply = scripted_reply(find_stability_item(input[-1].text), sample_active().epoch - 1)
        return ModelOutput(model=self.model_name, choices=[ChatCompletionChoice(
            message=ChatMessageAssistant(content=reply, source="generate"), stop_reason="stop")],
            usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))


@modelapi(name="ubstabrel")
def _ubstabrel():
    return _ScriptedAPI


@pytest.mark.slow
@pytest.mark.parametrize("convention", ["release", "paper"])
def test_inspect_end_to_end(tmp_path, convention):
    log = inspect_eval(stability(epochs=N_RUNS, limit=LIMIT, subtasks=",".join(SUBTASKS), convention=convention),
                       model=get_model("ubstabrel/scripted", memoize=False), log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success", log.error
    assert log.eval.metadata["convention"] == convention
    views = {s.reducer: {k: v.value for k, v in s.metrics.items()} for s in log.results.scores}
    exp = expected(_items(), convention)
    assert views["ub_inspect/tar_a"]["tar_a"] == pytest.approx(exp["tar_a"], abs=1e-12)
    for key in ("tar_r", "best_acc", "worst_acc", "acc_spread"):
        assert views[None][key] == pytest.approx(exp[key], abs=1e-12), key
    metas = [s.scores["stability_scorer"].metadata for s in log.samples]
    assert {m["convention"] for m in metas} == {convention}
    if convention == "release":
        assert AMBIGUOUS in {m["parsed_answer"] for m in metas}


def test_inspect_rejects_an_unknown_convention():
    from ub_inspect._options import OptionError

    with pytest.raises(OptionError, match="option convention: must be one of paper, release"):
        stability(convention="code")


from lm_eval import simple_evaluate  # noqa: E402
from lm_eval.api.registry import register_model  # noqa: E402
from support.stability_lm import RunIndexedStabilityLM  # noqa: E402


@register_model("ubtest-tar-scripted")
class _ScriptedLM(RunIndexedStabilityLM):
    """Test-only lm-eval twin of ``ubstabrel``."""

    def reply(self, item, run):
        return scripted_reply(item, run)


@pytest.mark.parametrize("convention", ["release", "paper"])
@pytest.mark.slow
def test_lmeval_end_to_end(convention):
    from support.lmeval_tasks import ub_task_manager

    tasks = [f"ub_tar_{s}" for s in SUBTASKS]
    res = simple_evaluate(model="ubtest-tar-scripted", tasks=tasks, task_manager=ub_task_manager(
        {"convention": convention}), limit=LIMIT)
    for s in SUBTASKS:
        row = {k.split(",")[0]: v for k, v in res["results"][f"ub_tar_{s}"].items()
               if k.endswith(",runs") and "_stderr" not in k}
        for key, value in expected(_items([s]), convention).items():
            assert row[key] == pytest.approx(value, abs=1e-12), (s, key)


# ------------------------------------------------------------------------------------------------ ub stability score

def _line(task, qid, run, reply, options, gold):
    return json.dumps({"task": task, "id": qid, "run": run, "reply": reply, "options": options, "gold": gold})


def test_score_cli_conventions():
    lines = [_line("geometric_shapes", "q1", r, reply, FOUR, "A")
             for r, reply in enumerate(["ANSWER: A", "It is a circle.", "ANSWER: A"])]
    lines += [_line("geometric_shapes", "q2", r, "Both (A) and (B) fit.", FOUR, "B") for r in range(3)]
    paper, errs = score_lines(lines)
    release, errs2 = score_lines(lines, convention="release")
    assert not errs and not errs2
    p, r = paper["geometric_shapes"], release["geometric_shapes"]
    # paper: q1 [A, None, A] disagrees, q2 all unreadable agrees; release: q1 [A, A, A] agrees, q2 ambiguous
    assert (p["tar_a"], r["tar_a"]) == (0.5, 0.5)
    assert (p["worst_acc"], r["worst_acc"]) == (0.0, 0.5)
    assert p["parse_failure_rate"] == pytest.approx(4 / 6) and r["parse_failure_rate"] == pytest.approx(3 / 6)
    assert p["acc_spread"] == 0.5 and r["acc_spread"] == 0.0  # runs 1, 0, 1 of 2 right; best = worst = 1/2
    with pytest.raises(ValueError, match="convention"):
        score_lines(lines, convention="code")


def test_score_cli_flag(tmp_path, capsys):
    from ub_core.cli import main

    path = tmp_path / "runs.jsonl"
    # navigate under the release: exact-case words first, so 'Yes' wins over the lower-case 'no's
    path.write_text("\n".join(_line("navigate", "q", r, "So, no. Yes, I mean no", ["Yes", "No"], "B")
                              for r in range(2)) + "\n")
    assert main(["stability", "score", str(path), "--json", "--convention", "release"]) == 0
    out = json.loads(capsys.readouterr().out)["tasks"]["navigate"]
    assert out["tar_a"] == 1.0 and out["best_acc"] == 0.0
    assert main(["stability", "score", str(path), "--json"]) == 0  # our reader: the conclusion "So, no."
    assert json.loads(capsys.readouterr().out)["tasks"]["navigate"]["best_acc"] == 1.0
