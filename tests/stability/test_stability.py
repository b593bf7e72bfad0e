"""Run-to-run stability (the non-determinism paper): the metrics on hand cases, the bank and its loaders, and the task
end to end in Inspect (epochs) and lm-eval (repeats) with the offline models and two test-only fakes whose TAR is known
exactly."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from ub_core.metrics import (accuracy_spread, best_accuracy, correctness, median_accuracy,  # noqa: E402
                             parse_failure_rate, question_agreement, question_stability, run_accuracies,
                             stability_summary,
                             worst_accuracy)
from ub_core.oracle import stability_reply  # noqa: E402
from ub_core.problems import load_bank  # noqa: E402
from ub_core.problems.stability import (LETTERS, SUBTASKS, StabilityItem, find_stability_item,  # noqa: E402
                                        load_hub_items, load_stability_items, parse_answer, record_to_item,
                                        stability_items)

N_RUNS = 5
LIMIT = 3  # questions per subtask in the end-to-end runs: 24 questions x 5 runs


# ------------------------------------------------------------------------------------------------ metrics

def test_summary_on_a_hand_case():
    # 3 runs x 4 questions, answers A B C D.
    # q0: raw identical, right every run         -> tar_r 1, tar_a 1, best 1, worst 1
    # q1: raw differs, parsed B every run         -> tar_r 0, tar_a 1, best 1, worst 1
    # q2: right, wrong, right                     -> tar_r 0, tar_a 0, best 1, worst 0
    # q3: parse failure (None) in every run       -> tar_r 1, tar_a 1 (None agrees with None), best 0, worst 0
    raw = [["A", "B", "C", "??"], ["A", "so B", "A", "??"], ["A", "B.", "C", "??"]]
    parsed = [["A", "B", "C", None], ["A", "B", "A", None], ["A", "B", "C", None]]
    s = stability_summary(raw, parsed, ["A", "B", "C", "D"])
    assert s["tar_r"] == 2 / 4 and s["tar_a"] == 3 / 4
    assert s["best_acc"] == 3 / 4 and s["worst_acc"] == 2 / 4
    assert s["run_accuracies"] == [3 / 4, 2 / 4, 3 / 4]
    assert s["median_acc"] == 3 / 4 and s["acc_spread"] == 1 / 4
    assert s["n_runs"] == 3 and s["n_questions"] == 4
    assert question_agreement(raw) == [True, False, False, True]
    assert question_agreement(parsed) == [True, True, False, True]


def test_none_agrees_only_with_none_and_is_never_correct():
    s = stability_summary([["x"], ["y"]], [[None], ["A"]], ["A"])
    assert s["tar_a"] == 0.0 and s["best_acc"] == 1.0 and s["worst_acc"] == 0.0
    assert correctness([[None, "B"]], ["A", "B"]) == [[False, True]]


def test_accuracy_helpers_and_even_median():
    correct = [[1, 0, 1, 1], [0, 0, 1, 1], [1, 1, 1, 1], [1, 0, 0, 1]]
    assert run_accuracies(correct) == [0.75, 0.5, 1.0, 0.5]
    assert median_accuracy(correct) == 0.625  # even N: mean of the two middle run accuracies (0.5, 0.75)
    assert accuracy_spread(correct) == 0.5
    assert best_accuracy(correct) == 1.0 and worst_accuracy(correct) == 0.25


def test_question_stability_is_one_column_of_the_summary():
    q = question_stability(["ANSWER: B", "B", "ANSWER: B"], ["B", "B", "B"], "B")
    assert q == {"tar_r": 0, "tar_a": 1, "best_acc": 1, "worst_acc": 1, "run_correct": [1, 1, 1]}
    assert question_stability(["x"], [None], "A")["run_correct"] == [0]


@pytest.mark.parametrize("call, message", [
    (lambda: stability_summary([["a", "b"], ["a"]], [["A", "B"], ["A"]], ["A", "B"]), "same number of questions"),
    (lambda: stability_summary([["a"]], [["A"], ["A"]], ["A"]), "raw_runs is 1 runs x 1 questions"),
    (lambda: stability_summary([["a"]], [["A"]], ["A", "B"]), "got 2 answers for 1 questions"),
    (lambda: stability_summary([["a"]], [["A"]], [None]), "answer key entry is None"),
    (lambda: stability_summary([], [], []), "at least one run"),
    (lambda: stability_summary("ab", [["A"]], ["A"]), "sequence of runs"),
    (lambda: stability_summary([["a"]], ["A"], ["A"]), "parsed_runs[0] must be a sequence"),
    (lambda: run_accuracies([[1, 2]]), "must be 0/1"),
    (lambda: question_stability(["a", "b"], ["A"], "A"), "2 raw replies but 1 parsed"),
])
def test_bad_input_is_a_one_line_value_error(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value) and "\n" not in str(err.value)


# ------------------------------------------------------------------------------------------------ bank

def _simulate_walk(question: str) -> bool:
    """An independent reading of a navigate question: parse the instructions and walk them."""
    text = question.split("instructions: ", 1)[1].split("\n", 1)[0]
    facing = text.startswith("Always face forward.")
    x = y = heading = 0
    dirs = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    for m in re.finditer(r"Turn (right|around|left)\.|Take (\d+) steps?(?: (forward|backward|left|right))?\.", text):
        if m.group(1):
            heading = (heading + {"right": 1, "around": 2, "left": 3}[m.group(1)]) % 4
        else:
            rel = {None: 0, "forward": 0, "right": 1, "backward": 2, "left": 3}[m.group(3)]
            assert facing or rel == 0
            dx, dy = dirs[(heading + rel) % 4]
            x, y = x + int(m.group(2)) * dx, y + int(m.group(2)) * dy
    return (x, y) == (0, 0)


def test_bank_is_registered_deterministic_and_unique():
    items = load_bank("stability")
    assert {it.category for it in items} == set(SUBTASKS)
    assert len({it.id for it in items}) == len(items) == len({it.prompt for it in items}) == 328
    assert len(load_bank("stability", size="full")) == 1210
    assert len(load_bank("stability", categories=["ruin_names"])) == 24
    from ub_core.problems.stability import _builtin
    _builtin.cache_clear()  # regenerate from scratch: the same items
    again = load_bank("stability")
    assert [it.to_record() for it in again] == [it.to_record() for it in items]
    for it in items:
        assert it.source == ("builtin" if it.category in SUBTASKS[:3] else "builtin-standin")
        assert StabilityItem.from_record(it.to_record()).prompt == it.prompt
        assert find_stability_item(it.prompt) is it or find_stability_item(it.prompt).id == it.id


def test_generated_truths_check_out():
    nav = stability_items("full", ["navigate"])
    assert all((it.answer == "A") == _simulate_walk(it.question) for it in nav)
    assert sum(it.answer == "A" for it in nav) == 125  # balanced by construction
    for it in stability_items("full", ["geometric_shapes"]):
        pts = re.findall(r"(-?\d+\.\d+)[, ]+(-?\d+\.\d+)", it.question)
        n = len(set(pts))
        shape = it.options[it.answer_index]
        expected = {2: {"line"}, 3: {"triangle"}, 4: {"rectangle", "kite"}, 5: {"pentagon"}, 6: {"hexagon"},
                    7: {"heptagon"}, 8: {"octagon"}}[n]
        assert shape in expected, it.question
    for it in stability_items("full", ["logical_deduction_three_objects"]):
        # the answer is deduced, never stated: no clue puts the right object at the asked place
        correct = it.options[it.answer_index].lower()
        body, ask = it.question.rsplit("\n", 1)
        place = re.sub(r"^(Which book is|Who finished|Which fruit is) ", "", ask).rstrip("?")
        clues = body.split(": ", 1)[1].split(". ")[1:]
        assert len(clues) == 2
        assert not any(c.lower().startswith(correct) and c.rstrip(".").endswith(place) for c in clues), it.question
    for it in stability_items(None, ["college_mathematics"]):
        m = re.match(r"What is (\d+) × (\d+) − (\d+)\?", it.question)
        if m:
            a, b, c = map(int, m.groups())
            assert it.options[it.answer_index] == str(a * b - c)


def test_prompt_asks_for_a_letter_that_parse_option_reads():
    it = stability_items(None, ["geometric_shapes"])[0]
    assert "ANSWER: X" in it.prompt and "(J) triangle" in it.prompt
    for letter in it.letters:
        assert parse_answer(f"Reasoning first.\nANSWER: {letter}", len(it.options)) == letter
    assert parse_answer("No idea, sorry.", 10) is None
    assert parse_answer(None, 4) is None
    assert parse_answer("ANSWER: E", 4) is None  # not an option of a 4-option question


def test_parse_answer_reads_real_replies_with_option_texts():
    """The letter-only reading returned None for answers given by option text or value, and read the
    ``A:`` turn prefix of a chain of thought as option A."""
    yn, vals = ["Yes", "No"], ["12", "35", "40", "7"]
    for reply in ("No", "- No", '{"Answer": "No"}', "A: Let's think step by step. We turn around twice, walk 3 "
                  "steps back and 3 forward. So the answer is No."):
        assert parse_answer(reply, 2, yn) == "B", reply
    for reply in ("\\boxed{35}", "Final Answer: The final answer is 35.", "35.0"):
        assert parse_answer(reply, 4, vals) == "B", reply
    assert parse_answer("0.95", 3, ["0.05", "0.5", "0.95"]) == "C"
    assert parse_answer("A: Let's think step by step.", 4) is None  # a turn prefix, not a choice


def test_unreadable_is_an_answer_of_its_own_kind_in_tar_a():
    """The convention: an unreadable reply is the answer "unreadable". All-unreadable agrees; a mix of readable and
    unreadable does not; unreadable is never correct; parse_failure_rate tells how much of TARa is unreadable."""
    yn = ["Yes", "No"]
    replies = [  # [run][question]; q0 all unreadable, q1 unreadable then No, q2 No by letter and by text
        ["I can't tell.", "Hmm.", "(B)"],
        ["I can't tell.", "So the answer is No.", "No"],
    ]
    parsed = [[parse_answer(r, 2, yn) for r in run] for run in replies]
    assert parsed == [[None, None, "B"], [None, "B", "B"]]
    s = stability_summary(replies, parsed, ["A", "B", "B"])
    # TARa: q0 agrees (unreadable twice), q1 does not, q2 does -> 2/3; TARr: only q0's replies are identical
    assert s["tar_a"] == 2 / 3 and s["tar_r"] == 1 / 3
    # unreadable never correct: run 0 has q2 only, run 1 q1 and q2; q0 (gold A) is never right
    assert s["run_accuracies"] == [1 / 3, 2 / 3] and s["best_acc"] == 2 / 3 and s["worst_acc"] == 1 / 3
    assert s["parse_failure_rate"] == 3 / 6 and parse_failure_rate(parsed) == 0.5
    # a model whose replies are all unreadable: TARa 100%, accuracy 0, and parse_failure_rate says why
    dead = stability_summary([["?", "?"], ["?", "?"]], [[None, None], [None, None]], ["A", "B"])
    assert dead["tar_a"] == 1.0 and dead["best_acc"] == 0.0 and dead["parse_failure_rate"] == 1.0


# ------------------------------------------------------------------------------------------------ loaders

BBH_NAVIGATE = [
    {"input": "If you follow these instructions, do you return to the starting point? Take 2 steps. Turn around. "
              "Take 2 steps.\nOptions:\n- Yes\n- No", "target": "Yes"},
    {"input": "If you follow these instructions, do you return to the starting point? Take 5 steps.\nOptions:\n"
              "- Yes\n- No", "target": "No"},
]
BBH_LOGICAL = [{"input": "Three birds sit on a branch: a crow, a wren and a jay. The crow is leftmost. The jay is "
                         "rightmost.\nOptions:\n(A) The crow is the second from the left\n(B) The wren is the second "
                         "from the left\n(C) The jay is the second from the left", "target": "(B)"}]
MMLU_MATH = [
    {"question": "What is 2 + 2?", "subject": "college_mathematics", "choices": ["3", "4", "5", "6"], "answer": 1},
    {"question": "What is 3 * 3?", "subject": "college_mathematics", "choices": ["9", "6", "3", "0"], "answer": 0},
    {"question": "What is 10 - 7?", "subject": "college_mathematics", "choices": ["1", "2", "4", "3"], "answer": 3},
]


def _write_parquet(path, records):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records), path)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """Local exports in the upstream schemas: the hub's parquet layout (``<config>/test-*.parquet``) for BBH
    logical deduction and MMLU, a JSONL file for BBH navigate, a JSON-lines file named after an MMLU subject."""
    root = tmp_path_factory.mktemp("exports")
    _write_parquet(root / "bbh" / "logical_deduction_three_objects" / "test-00000-of-00001.parquet", BBH_LOGICAL)
    (root / "bbh" / "navigate.jsonl").write_text("\n".join(json.dumps(r) for r in BBH_NAVIGATE) + "\n")
    _write_parquet(root / "mmlu" / "college_mathematics" / "test-00000-of-00001.parquet", MMLU_MATH)
    _write_parquet(root / "mmlu" / "college_mathematics" / "dev-00000-of-00001.parquet", MMLU_MATH[:1])
    (root / "mmlu" / "public_relations.json").write_text(json.dumps(
        {"question": "Which tool announces news to journalists?", "subject": "public_relations",
         "choices": ["a memo", "a press release", "a ledger", "a invoice"], "answer": 1}) + "\n")
    return root


def test_bbh_exports_normalise(exports):
    nav = load_hub_items("navigate", str(exports / "bbh"))
    assert [(it.options, it.answer) for it in nav] == [(("Yes", "No"), "A"), (("Yes", "No"), "B")]
    assert nav[0].question.endswith("Take 2 steps.") and "Options" not in nav[0].question
    assert nav[0].id == "navigate_test_0000" and nav[0].source == str(exports / "bbh")
    (logic,) = load_hub_items("logical_deduction_three_objects", str(exports / "bbh"))
    assert logic.answer == "B" and logic.options[1] == "The wren is the second from the left"
    assert "(C) The jay" in logic.prompt and logic.prompt.endswith("one of A, B, C.")


def test_mmlu_exports_normalise_and_split_is_honoured(exports):
    math_items = load_stability_items(["college_mathematics", "public_relations"], "hf", mmlu=str(exports / "mmlu"))
    assert [it.answer for it in math_items] == ["B", "A", "D", "B"]
    assert math_items[0].options == ("3", "4", "5", "6") and math_items[0].category == "college_mathematics"
    assert math_items[3].category == "public_relations"
    dev = load_hub_items("college_mathematics", str(exports / "mmlu"), split="dev")
    assert len(dev) == 1
    one_file = load_hub_items("college_mathematics",
                              str(exports / "mmlu" / "college_mathematics" / "test-00000-of-00001.parquet"), limit=2)
    assert len(one_file) == 2


@pytest.mark.slow
def test_loader_errors_are_one_line(exports, tmp_path):
    cases = [
        ({"input": "No options here", "target": "Yes"}, "no 'Options:' block"),
        ({"input": "Q\nOptions:\n(A) x\n(C) y", "target": "(A)"}, "not A, B, C"),
        ({"input": "Q\nOptions:\n- Yes\n- No", "target": "Maybe"}, "not one of the options"),
        ({"question": "Q", "choices": ["a", "b"], "answer": 7}, "out of range"),
        ({"text": "Q"}, "expected BBH fields"),
    ]
    for record, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            record_to_item(record, "navigate", 0, "fixture")
    with pytest.raises(ValueError, match="no parquet/json export"):
        load_hub_items("ruin_names", str(exports / "bbh"))
    with pytest.raises(ValueError, match="unknown stability subtask 'chess'"):
        load_stability_items(["chess"])
    with pytest.raises(ValueError) as err:  # the hub is unreachable here: a one-line error, not a traceback
        load_hub_items("navigate", "no-such-org/no-such-dataset")
    assert "cannot load 'no-such-org/no-such-dataset'" in str(err.value) and "\n" not in str(err.value)


# ------------------------------------------------------------------------------------------------ fake models

def _h(item_id: str, run: int) -> int:
    return int(hashlib.sha256(f"{item_id}|{run}".encode()).hexdigest()[:8], 16)


def injected_kind(item_id: str, run: int) -> str:
    """The known injection: on run r of question q, ``hash(q, r) mod 10`` picks the reply kind: 0-1 a reworded
    reply with the same answer, 2 a wrong letter, 3 an unparseable reply, else the plain right answer."""
    return {0: "reworded", 1: "reworded", 2: "wrong", 3: "garbage"}.get(_h(item_id, run) % 10, "clean")


def noisy_reply(item: StabilityItem, run: int) -> str:
    kind = injected_kind(item.id, run)
    if kind == "reworded":  # half the items name the option by its text, which the MCQ reader must map back
        if _h(item.id, -2) % 2:
            return f"Checking the options once more.\nSo the answer is {item.options[item.answer_index]}."
        return f"Checking the options once more.\nANSWER: {item.answer}"
    if kind == "wrong":
        return f"ANSWER: {item.letters[(item.answer_index + 1) % len(item.options)]}"
    if kind == "garbage":
        return "No idea, sorry."
    return f"ANSWER: {item.answer}"


def deterministic_reply(item: StabilityItem) -> str:
    return f"ANSWER: {item.letters[_h(item.id, -1) % len(item.options)]}"


def expected_noisy(items: list[StabilityItem], n_runs: int) -> dict:
    """TARr/TARa/... from the injection alone (not through ub_core.metrics): a reply's text is a function of its
    kind, and its parsed answer of kind -> {right, wrong, None}."""
    cls = {"clean": "right", "reworded": "right", "wrong": "wrong", "garbage": None}
    kinds = [[injected_kind(it.id, r) for r in range(n_runs)] for it in items]
    q = len(items)
    run_acc = [sum(cls[k[r]] == "right" for k in kinds) / q for r in range(n_runs)]
    return {"tar_r": sum(len(set(k)) == 1 for k in kinds) / q,
            "tar_a": sum(len({cls[x] for x in k}) == 1 for k in kinds) / q,
            "best_acc": sum(any(cls[x] == "right" for x in k) for k in kinds) / q,
            "worst_acc": sum(all(cls[x] == "right" for x in k) for k in kinds) / q,
            "median_acc": statistics.median(run_acc), "acc_spread": max(run_acc) - min(run_acc),
            "acc": sum(run_acc) / n_runs,
            "parse_failure_rate": sum(cls[x] is None for k in kinds for x in k) / (q * n_runs)}


def _e2e_items(subtasks=SUBTASKS, limit=LIMIT) -> list[StabilityItem]:
    return load_stability_items(subtasks, limit=limit)


def test_injection_is_neither_trivial_nor_total():
    exp = expected_noisy(_e2e_items(), N_RUNS)
    # with 24 questions and P(clean) = 0.6 per run: every rate must sit strictly between 0 and 1 for the fake to
    # test anything (checked once here; the hash is fixed, so this never flips)
    assert 0 < exp["tar_r"] < exp["tar_a"] < 1 and 0 < exp["worst_acc"] < exp["best_acc"] <= 1
    assert exp["acc_spread"] > 0


# ------------------------------------------------------------------------------------------------ Inspect

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, GenerateConfig, ModelAPI,  # noqa: E402
                              ModelOutput, ModelUsage, get_model, modelapi)

from ub_inspect.stability import stability  # noqa: E402


class _StabilityFakeAPI(ModelAPI):
    """Test-only: ``ubstab/noisy`` (the injection above) and ``ubstab/deterministic`` (a hash-chosen letter, the
    same every run). The run index is the sample's epoch, read from Inspect's active-sample context (private in
    0.3.285, fine for a test fake): with it the per-run accuracies, not only the TARs, are known exactly."""

    def __init__(self, model_name: str, base_url=None, api_key=None, config: GenerateConfig = GenerateConfig(),
                 **kw):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):
        from inspect_ai.log._samples import sample_active

        item = find_stability_item(input[-1].text)
        run = sample_active().epoch - 1
        reply = noisy_reply(item, run) if self.model_name == "noisy" else deterministic_reply(item)
        return ModelOutput(model=self.model_name, choices=[ChatCompletionChoice(
            message=ChatMessageAssistant(content=reply, source="generate"), stop_reason="stop")],
            usage=ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2))


@modelapi(name="ubstab")
def _ubstab():
    return _StabilityFakeAPI


def _inspect(model, tmp_path, limit=LIMIT, **task_args):
    model = get_model(model, memoize=False) if model.startswith("ubstab/") else model
    log = inspect_eval(stability(epochs=N_RUNS, limit=limit, **task_args), model=model, log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success", log.error
    views = {s.reducer: {k: v.value for k, v in s.metrics.items()} for s in log.results.scores}
    return log, views


def _check_inspect(views, expected):
    """First the view reduced by ub_inspect/tar_a, led by TARa (the headline) with the epochs that ran; then the
    metrics over every epoch."""
    assert list(views) == ["ub_inspect/tar_a", None] and next(iter(views["ub_inspect/tar_a"])) == "tar_a"
    assert views["ub_inspect/tar_a"]["epochs"] == N_RUNS
    for key, value in expected.items():
        view = views["ub_inspect/tar_a" if key == "tar_a" else None]
        assert view[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.slow
def test_inspect_oracle_and_collapse(tmp_path):
    items = _e2e_items(limit=2)
    share_a = sum(it.answer == "A" for it in items) / len(items)  # collapse always answers A
    # first 2 items per subtask with answer A: navigate 1, college_mathematics 1, public_relations 2 -> 4 of 16
    assert share_a == 4 / 16
    log, views = _inspect("ub/oracle", tmp_path, limit=2)
    assert len(log.samples) == len(items) * N_RUNS
    _check_inspect(views, {"tar_r": 1.0, "tar_a": 1.0, "best_acc": 1.0, "worst_acc": 1.0, "median_acc": 1.0,
                           "acc": 1.0, "acc_spread": 0.0})
    log, views = _inspect("ub/collapse", tmp_path, limit=2)
    _check_inspect(views, {"tar_r": 1.0, "tar_a": 1.0, "best_acc": share_a, "worst_acc": share_a,
                           "median_acc": share_a, "acc": share_a, "acc_spread": 0.0})
    assert log.eval.config.epochs == N_RUNS
    assert log.plan.config.temperature == 0.0 and log.plan.config.top_p == 1.0 and log.plan.config.seed == 0


@pytest.mark.slow
def test_inspect_fake_models_give_the_injected_tar(tmp_path):
    items = _e2e_items()
    log, views = _inspect("ubstab/noisy", tmp_path)
    _check_inspect(views, expected_noisy(items, N_RUNS))
    # per subtask: TARa of its questions, with the standard error of a mean of 0/1 indicators, sd / sqrt(Q)
    for subtask in {it.category for it in items}:
        mine = [it for it in items if it.category == subtask]
        agree = [expected_noisy([it], N_RUNS)["tar_a"] for it in mine]
        mean = sum(agree) / len(agree)
        assert views["ub_inspect/tar_a"][subtask] == pytest.approx(mean, abs=1e-12), subtask
        sd = math.sqrt(sum((a - mean) ** 2 for a in agree) / (len(agree) - 1))
        assert views["ub_inspect/tar_a"][f"{subtask}_stderr"] == pytest.approx(sd / math.sqrt(len(agree)),
                                                                               abs=1e-12), subtask
    score = log.samples[0].scores["stability_scorer"]
    assert set(score.metadata) >= {"completion", "parsed_answer", "target", "epoch"}
    det_acc = sum(deterministic_reply(it) == f"ANSWER: {it.answer}" for it in items) / len(items)
    log, views = _inspect("ubstab/deterministic", tmp_path)
    _check_inspect(views, {"tar_r": 1.0, "tar_a": 1.0, "best_acc": det_acc, "worst_acc": det_acc,
                           "median_acc": det_acc, "acc_spread": 0.0})


@pytest.mark.slow
def test_inspect_hf_greedy_is_fully_stable(tiny_llama, tmp_path_factory, fast_hf_batching):
    """A real local model through Inspect's hf/ provider, greedy (-M do_sample=false: the provider samples by
    default, and transformers refuses temperature 0 when sampling). Greedy decoding of the same prompt on one CPU
    process is deterministic, so TARr = TARa = 1 whatever the model answers, and best = worst accuracy."""
    path = tiny_llama
    model = get_model(f"hf/{path}", do_sample=False, memoize=False)
    log = inspect_eval(stability(epochs=3, limit=1, subtasks="navigate,geometric_shapes", max_tokens=8),
                       model=model, log_dir=str(tmp_path_factory.mktemp("logs")), display="none")[0]
    assert log.status == "success", log.error
    views = {s.reducer: {k: v.value for k, v in s.metrics.items()} for s in log.results.scores}
    assert views[None]["tar_r"] == 1.0 and views["ub_inspect/tar_a"]["tar_a"] == 1.0
    assert views[None]["best_acc"] == views[None]["worst_acc"]
    replies = {s.id: set() for s in log.samples}
    for s in log.samples:
        replies[s.id].add(s.output.completion)
    assert all(len(r) == 1 for r in replies.values()) and len(replies) == 2


def test_inspect_task_options(tmp_path, exports):
    log, views = _inspect("ub/oracle", tmp_path, subtasks="navigate,college_mathematics", source="hf",
                          bbh=str(exports / "bbh"), mmlu=str(exports / "mmlu"))
    assert {s.id for s in log.samples} == {"navigate_test_0000", "navigate_test_0001", "college_mathematics_test_0000",
                                          "college_mathematics_test_0001", "college_mathematics_test_0002"}
    # hub items are not built in: the oracle cannot answer them, every reply is a parse failure, the same each run
    assert views[None]["acc"] == 0.0 and views["ub_inspect/tar_a"]["tar_a"] == 1.0
    with pytest.raises(ValueError, match="option epochs"):
        stability(epochs=0)


# ------------------------------------------------------------------------------------------------ lm-eval

lm_eval = pytest.importorskip("lm_eval")

from lm_eval import simple_evaluate  # noqa: E402
from lm_eval.api.registry import register_model  # noqa: E402
from support.stability_lm import RunIndexedStabilityLM  # noqa: E402

import ub_lmeval  # noqa: E402, F401  (imported for its side effect: registers the ub-* models with lm-eval)
from ub_lmeval.stability import (median_run_accuracy, process_results_tar, run_accuracy_spread,  # noqa: E402
                                 unreadable_rate)


class _FakeTarLM(RunIndexedStabilityLM):
    """Test-only lm-eval twin of the ubstab fakes."""

    mode = "noisy"

    def reply(self, item, run):
        return noisy_reply(item, run) if self.mode == "noisy" else deterministic_reply(item)


@register_model("ubtest-tar-noisy")
class _NoisyTarLM(_FakeTarLM):
    mode = "noisy"


@register_model("ubtest-tar-deterministic")
class _DeterministicTarLM(_FakeTarLM):
    mode = "deterministic"


def _lm(task_manager, model, limit=LIMIT):
    res = simple_evaluate(model=model, tasks=["ub_tar"], task_manager=task_manager, limit=limit)
    return {task: {k.split(",")[0]: v for k, v in row.items() if k.endswith(",runs") and "_stderr" not in k}
            for task, row in res["results"].items()}


def _check_lm(rows, expected):
    for key in ("tar_r", "tar_a", "best_acc", "worst_acc"):
        assert rows["ub_tar"][key] == pytest.approx(expected[key], abs=1e-12), key


def test_lmeval_tasks_are_found(task_manager):
    assert {"ub_tar", *(f"ub_tar_{s}" for s in SUBTASKS)} <= set(task_manager.all_tasks)


@pytest.mark.slow
def test_lmeval_oracle_and_collapse(task_manager):
    rows = _lm(task_manager, "ub-oracle", limit=2)
    for task in (f"ub_tar_{s}" for s in SUBTASKS):
        assert rows[task] == {"tar_r": 1.0, "tar_a": 1.0, "best_acc": 1.0, "worst_acc": 1.0, "acc": 1.0,
                              "median_acc": 1.0, "acc_spread": 0.0, "parse_failure_rate": 0.0}
    rows = _lm(task_manager, "ub-collapse", limit=2)
    share_a = 4 / 16  # see test_inspect_oracle_and_collapse
    _check_lm(rows, {"tar_r": 1.0, "tar_a": 1.0, "best_acc": share_a, "worst_acc": share_a})
    assert rows["ub_tar"]["acc"] == pytest.approx(share_a)
    for s in SUBTASKS:
        items = _e2e_items([s], limit=2)
        share = sum(it.answer == "A" for it in items) / len(items)
        assert rows[f"ub_tar_{s}"]["median_acc"] == pytest.approx(share) and rows[f"ub_tar_{s}"]["acc_spread"] == 0


@pytest.mark.slow
def test_lmeval_fake_models_give_the_injected_tar(task_manager):
    rows = _lm(task_manager, "ubtest-tar-noisy")
    _check_lm(rows, expected_noisy(_e2e_items(), N_RUNS))
    for s in SUBTASKS:  # per subtask, the run accuracies too
        exp = expected_noisy(_e2e_items([s]), N_RUNS)
        for key, value in exp.items():
            assert rows[f"ub_tar_{s}"][key] == pytest.approx(value, abs=1e-12), (s, key)
    rows = _lm(task_manager, "ubtest-tar-deterministic")
    items = _e2e_items()
    det_acc = sum(deterministic_reply(it) == f"ANSWER: {it.answer}" for it in items) / len(items)
    _check_lm(rows, {"tar_r": 1.0, "tar_a": 1.0, "best_acc": det_acc, "worst_acc": det_acc})


def test_process_results_and_aggregations():
    doc = {"options": ["Yes", "No"], "answer": "B"}
    out = process_results_tar(doc, [["ANSWER: B", "ANSWER: B", "hmm", "B"]])
    pfr = out.pop("parse_failure_rate")  # new term: the unreadable count, the runs and examples
    assert pfr["unreadable"] == 1 and pfr["runs"] == 4 and [e[1] for e in pfr["examples"]] == ["hmm"]
    assert unreadable_rate([pfr, {"unreadable": 0, "runs": 4, "examples": []}]) == 1 / 8
    assert out == {"tar_r": 0, "tar_a": 0, "best_acc": 1, "worst_acc": 0, "acc": 0.75,
                   "median_acc": [1, 1, 0, 1], "acc_spread": [1, 1, 0, 1]}
    per_doc = [[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1]]  # run accuracies 0.75, 0.75, 0.5
    assert median_run_accuracy(per_doc) == 0.75 and run_accuracy_spread(per_doc) == 0.25
    with pytest.raises(ValueError, match="different numbers of runs"):
        median_run_accuracy([[1, 1], [1]])


def test_offline_reply_helper():
    it = stability_items(None, ["ruin_names"])[0]
    assert stability_reply(it.prompt, "oracle") == f"ANSWER: {it.answer}"
    assert stability_reply(it.prompt, "collapse") == "ANSWER: A"
    assert stability_reply("What is the capital of France?", "oracle") is None
    assert LETTERS.startswith("ABCD")


def test_lmeval_parse_failures_are_logged_with_examples(caplog):
    doc = {"id": "nav_1", "options": ["Yes", "No"], "answer": "B"}
    terms = [process_results_tar(doc, [["So the answer is No.", "I refuse.", "The answer is Yes or No.", "- No"]])
             ["parse_failure_rate"], process_results_tar(doc, [["No"] * 4])["parse_failure_rate"]]
    with caplog.at_level("WARNING"):
        assert unreadable_rate(terms) == 2 / 8
    msg = " ".join(r.getMessage() for r in caplog.records)
    assert "2 of 8 replies unreadable" in msg and "I refuse." in msg and "ambiguous" in msg and "nav_1 run 1" in msg


def test_inspect_parse_failure_rate_logs_examples(caplog):
    import logging

    from inspect_ai.scorer import SampleScore, Score

    from ub_inspect.stability.scorer import parse_failure_rate

    def cell(sid, epoch, reply, letter, reason=None):
        return SampleScore(sample_id=sid, score=Score(value="C" if letter == "B" else "I", metadata={
            "completion": reply, "parsed_answer": letter, "target": "B", "epoch": epoch,
            "unreadable_reason": reason}))

    scores = [cell("nav_1", 1, "ANSWER: B", "B"), cell("nav_1", 2, "I refuse.", None, "no option found"),
              cell("nav_2", 1, "Yes or No", None, "ambiguous"), cell("nav_2", 2, "ANSWER: B", "B")]
    # Inspect may turn off propagation after an eval in the same process: attach the handler to the logger itself
    log = logging.getLogger("ub_core.metrics.stability")
    log.addHandler(caplog.handler)
    old_level = log.level
    log.setLevel(logging.WARNING)
    try:
        assert parse_failure_rate()(scores) == 2 / 4
    finally:
        log.removeHandler(caplog.handler)
        log.setLevel(old_level)
    # the record may arrive twice (our handler and, while propagation is on, caplog's root handler)
    recs = [r for r in caplog.records if r.name == "ub_core.metrics.stability"]
    msgs = sorted({r.getMessage() for r in recs})
    assert len(msgs) == 1 and all(r.levelno == logging.WARNING for r in recs)
    assert "ub_inspect/stability: 2 of 4 replies unreadable" in msgs[0]
    assert "sample nav_1 epoch 2: no option found: 'I refuse.'" in msgs[0]
    assert "sample nav_2 epoch 1: ambiguous: 'Yes or No'" in msgs[0]
