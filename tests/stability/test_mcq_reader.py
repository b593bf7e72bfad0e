"""ub_core.parsing.mcq.read_mcq: the one multiple-choice reader of the stability task (both adapters and the CLI)."""

from __future__ import annotations


import pytest
from support.linearity import assert_linear
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ub_core.parsing.mcq import LETTERS, MCQRead, read_mcq
from ub_core.problems.stability import parse_answer

YN = ["Yes", "No"]  # BBH navigate
ABCD = ["the red book", "the green book", "the blue book", "the black book"]
VALS = ["12", "35", "40", "7"]
PROBS = ["0.05", "0.5", "0.95", "1.5"]
MONEY = ["$1,200", "$1,500", "$2,000", "$950"]
SHAPES = ["circle", "heptagon", "hexagon", "kite", "line", "octagon", "pentagon", "rectangle", "sector", "triangle"]
TERMS = ["press release", "press conference", "media kit", "embargo"]

# (reply, options, expected letter or None). Replies are shaped like real model output.
CASES = [
    # --- letters in their usual forms
    ("(B)", ABCD, "B"),
    ("B", ABCD, "B"),
    ("B)", ABCD, "B"),
    ("B.", ABCD, "B"),
    ("Answer: B", ABCD, "B"),
    ("ANSWER: C", ABCD, "C"),
    ("**B**", ABCD, "B"),
    ("The answer is **(D)**.", ABCD, "D"),
    ("answer: b", ABCD, "B"),
    ("The answer is (c).", ABCD, "C"),
    ("[C]", ABCD, "C"),
    ("Option C", ABCD, "C"),
    ("The correct option is D.", ABCD, "D"),
    ("I would choose A because the red book is leftmost.", ABCD, "A"),
    ("B is correct: the green book is in the middle.", ABCD, "B"),
    ("Ｂ", ABCD, "B"),  # full-width letter (NFKC)
    # --- JSON
    ('{"Answer": "(B)"}', ABCD, "B"),
    ('{"answer": "No"}', YN, "B"),
    ('{"Answer": "No"}', YN, "B"),
    ('```json\n{"final_answer": "C", "reasoning": "..."}\n```', ABCD, "C"),
    ('{"answer": 35}', VALS, "B"),
    ('{"reasoning": "both fit", "answer": "maybe"}', YN, None),
    # --- Yes/No by text
    ("No", YN, "B"),
    ("- No", YN, "B"),
    ("yes", YN, "A"),
    ("No.", YN, "B"),
    ("**Yes**", YN, "A"),
    ("So the answer is No.", YN, "B"),
    ("The answer is: Yes", YN, "A"),
    # --- option texts
    ("The answer is the blue book.", ABCD, "C"),
    ("Answer: press conference", TERMS, "B"),
    ("answer: Press Release", TERMS, "A"),
    ("The answer is hexagon.", SHAPES, "C"),
    ("(C) the blue book", ABCD, "C"),
    # --- values
    ("\\boxed{35}", VALS, "B"),
    ("Final Answer: The final answer is 35.", VALS, "B"),
    ("Final Answer: The final answer is $\\boxed{7}$. I hope it is correct.", VALS, "D"),
    ("35.0", VALS, "B"),
    ("0.95", PROBS, "C"),
    ("The answer is $1,500.", MONEY, "B"),
    ("Answer: 2000", MONEY, "C"),
    ("\\boxed{\\text{No}}", YN, "B"),
    ("The answer is 36.", VALS, None),  # a value no option has
    # --- chain of thought: the final cue wins over earlier mentions
    ("A: Let's think step by step. We start at the origin and take 3 steps forward, then 3 back. So the answer "
     "is No.", YN, "B"),
    ("Let's check each option. (A) is too small. (B) fits. (C) is too large.\nTherefore, the answer is (B).",
     ABCD, "B"),
    ("Option A looks plausible at first, but the clue rules it out.\nThe answer is C.", ABCD, "C"),
    ("The answer is (A). Wait, I misread the clue. The answer is (C).", ABCD, "C"),
    ("<think>Maybe (A)? No, the clue says otherwise.</think>\nThe answer is (D).", ABCD, "D"),
    ("Step 1: 12 + 23 = 35.\nStep 2: nothing else to add.\nANSWER: B", VALS, "B"),
    ("Reasoning: the walk returns to the start.\n\nFinal answer:\n\n**Yes**", YN, "A"),
    # --- markdown and chat preambles
    ("Sure! Here is my answer:\n\n**C**", ABCD, "C"),
    ("### Answer\n(B)", ABCD, "B"),
    ("Great question! After checking the options, I'll go with (D).", ABCD, "D"),
    ("Certainly.\n\n- **Answer:** B", ABCD, "B"),
    ("> ANSWER: A", ABCD, "A"),
    # --- refusals and empty output
    ("I'm sorry, but I can't help with that.", ABCD, None),
    ("I cannot determine the answer from the information given.", ABCD, None),
    ("", ABCD, None),
    ("   \n  ", YN, None),
    ("No idea, sorry.", YN, None),  # starts with an option's text, but it is prose
    # --- traps: turn prefixes, articles, ties
    ("A: Let's think step by step.", ABCD, None),
    ("A bird in the hand is worth two in the bush.", ABCD, None),
    ("A", ABCD, "A"),
    ("The answer is a bit unclear.", ABCD, None),
    ("I think it depends.", ABCD, None),
    ("The answer is A or B.", ABCD, None),
    ("The answer is Yes or No, depending on the reading.", YN, None),
    ("(A) No", YN, None),  # the letter of Yes with the text of No
    ("Option (A) says one thing, option (B) another.", ABCD, None),
    ("ANSWER: E", ABCD, None),  # not one of four options
    ("The answer is not clear to me.", ABCD, None),
    ("Q: Is 7 prime?\nA: Yes", YN, "A"),
    ("So the answer is Yes.\n\nQ: If you follow these instructions, do you return to the start? Take 1 step.\n"
     "A: Let's think step by step. So the answer is No.", YN, "A"),  # the model wrote the next few-shot turn
    ("There is no way to tell.", YN, None),
    ("Let me restate the options:\n(A) Yes\n(B) No", YN, None),  # the options list, no answer
    ("Let me restate the question first.\n(B) No", YN, "B"),
]


def test_table_is_large_and_varied():
    assert len(CASES) >= 60
    assert sum(exp is None for _, _, exp in CASES) >= 15 and sum(exp is not None for _, _, exp in CASES) >= 40


@pytest.mark.parametrize("reply,options,expected", CASES, ids=[f"{i:02d}" for i in range(len(CASES))])
def test_reader_table(reply, options, expected):
    got = read_mcq(reply, options)
    assert isinstance(got, MCQRead)
    assert got.letter == expected, (reply, got)
    if expected is None:
        assert got.reason  # an unreadable reply says why


def test_ties_say_ambiguous():
    for reply, options in (("The answer is A or B.", ABCD), ("(A) No", YN),
                           ("Option (A) says one thing, option (B) another.", ABCD)):
        assert "ambiguous" in read_mcq(reply, options).reason


def test_letters_only_without_option_texts():
    assert read_mcq("The answer is (C).", 4).letter == "C"
    assert read_mcq("No", 2).letter is None  # no option texts: "No" names nothing
    assert parse_answer("No", 2) is None and parse_answer("No", 2, ["Yes", "No"]) == "B"


@pytest.mark.parametrize("bad", [None, 3, b"B", ["B"], {"answer": "B"}, float("nan")])
def test_non_text_replies_are_unreadable_not_errors(bad):
    got = read_mcq(bad, ABCD)
    assert got.letter is None and "not text" in got.reason


@pytest.mark.parametrize("options", [None, "ABCD", [], 0, 27, True, list("x" * 30)])
def test_bad_options_are_unreadable_not_errors(options):
    assert read_mcq("B", options).letter is None


def _assert_linear(reply: str, options) -> None:
    small = reply[: len(reply) // 8] + reply[-(len(reply) // 8):]  # a quarter of it, both ends kept
    assert_linear(lambda text: read_mcq(text, options), small, reply, len(reply) / len(small), repr(reply[:30]),
                  floor_s=2.0)


@pytest.mark.slow
def test_long_adversarial_replies_are_linear():
    """200k-character replies built to hurt backtracking regexes finish fast (a quadratic reader would take
    minutes on these)."""
    hostile = [
        "answer is " * 20_000,
        "(" * 200_000,
        "A: " * 66_000,
        "\\boxed{" * 28_000,
        "1," * 100_000,
        " " * 199_990 + "B",
        "the answer is a " + "a " * 99_990,
        ("Option (A) " * 18_000) + "\nThe answer is (B).",
        "*" * 199_999 + "B",
        "{" * 100_000 + "}" * 100_000,
    ]
    for reply in hostile:
        _assert_linear(reply, ABCD)
        got = read_mcq(reply, ABCD)
        assert got.letter is None or got.letter in "ABCD"
    assert read_mcq(("Option (A) " * 18_000) + "\nThe answer is (B).", ABCD).letter == "B"
    assert read_mcq(" " * 199_990 + "B", ABCD).letter == "B"


# ------------------------------------------------------------------------------------------------ fuzz

_options = st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=st.one_of(st.text(max_size=300), st.binary(max_size=50), st.none(), st.integers()),
       options=st.one_of(_options, st.integers(min_value=-2, max_value=30)))
def test_fuzz_never_raises_and_returns_a_valid_letter_or_none(reply, options):
    got = read_mcq(reply, options)
    n = options if isinstance(options, int) else len(options)
    assert got.letter is None or (got.letter in LETTERS[: max(n, 0)])
    assert isinstance(got.reason, str)


_FORMS = ["({})", "{}", "{})", "Answer: {}", "ANSWER: {}", "**{}**", '{{"Answer": "({})"}}', "The answer is {}.",
          "Let's think.\nThe answer is ({}).", "[{}]"]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(min_value=2, max_value=10), data=st.data(),
       options=st.lists(st.sampled_from(["red", "blue", "green", "Yes", "No", "kite", "35", "7.5", "circle",
                                         "the red book"]), min_size=10, max_size=10, unique=True))
@pytest.mark.slow
def test_fuzz_letter_forms_round_trip(n, data, options):
    """A letter written in a usual form reads back as that letter, with or without option texts."""
    k = data.draw(st.integers(min_value=0, max_value=n - 1))
    form = data.draw(st.sampled_from(_FORMS))
    letter = LETTERS[k]
    reply = form.format(letter)
    assert read_mcq(reply, n).letter == letter, reply
    assert read_mcq(reply, options[:n]).letter == letter, reply


@settings(max_examples=200, deadline=None)
@given(options=st.lists(st.sampled_from(["red", "blue", "green", "kite", "sector", "35", "7.5", "press kit"]),
                        min_size=2, max_size=8, unique=True), data=st.data())
def test_fuzz_option_texts_round_trip(options, data):
    k = data.draw(st.integers(min_value=0, max_value=len(options) - 1))
    form = data.draw(st.sampled_from(["{}", "The answer is {}.", "Answer: {}", "**{}**", "- {}", '{{"answer": "{}"}}',
                                      "\\boxed{{{}}}"]))
    reply = form.format(options[k].upper() if form == "{}" else options[k])
    assert read_mcq(reply, options).letter == LETTERS[k], reply


# --------------------------------------------------------------------------------------- replies a person reads at once
# Classes of real replies from the llm-stability release's raw runs that a person reads at once. The replies are
# shortened from real ones (the tails are kept as the models wrote them); the options are the release's own,
# including the trailing "." that MMLU-style inline options "(A) 10. (B) 20." leave on every option text.

MMLU_EDGES = ["10.", "20.", "25.", "45."]
MMLU_PROB = ["1/64.", "15/64.", "1/4.", "3/8."]
MMLU_ANGLE = ["\u03c0/12.", "\u03c0/6.", "\u03c0/3.", "2\u03c0/3."]
MMLU_DIM = ["Zero", "One", "Two", "Three"]
MMLU_CRIT = ["local maximum at P and at Q.", "saddle point at P and at Q.",
             "local maximum at P and a saddle point at Q.", "local minimum at P and a saddle point at Q."]


@pytest.mark.parametrize("reply,expected", [
    ("Take 3 steps forward, turn around, take 2 steps. We end 1 step from the start.\n\nSo, no, we don't return to "
     "the starting point.", "B"),
    ("Forward 4, back 4: we are at (0, 0).\nSo, yes, you return to the starting point.", "A"),
    ("After all the steps we are 2 steps left of where we began, so no, you do not return to the starting point.",
     "B"),
])
def test_lower_case_conclusion_inside_a_sentence(reply, expected):
    assert read_mcq(reply, YN).letter == expected


def test_lower_case_conclusion_not_read_from_prose_that_is_no_conclusion():
    # "no" as a determiner, "yes" quoted inside the reasoning: no conclusion is drawn
    assert read_mcq("There is no step that turns us around, and the walk is long.", YN).letter is None
    assert read_mcq("So, no, we don't return. Wait: so, yes, you return to the starting point.", YN).letter == "A"


@pytest.mark.parametrize("reply,options,expected", [
    ("1 - 49/64 = 15/64.\n\nThe final answer is: $\\boxed{\\frac{15}{64}}$", MMLU_PROB, "B"),
    ("The final answer is \u03c0/30, which is equal to \u03c0/6.\n\nThe final answer is: $\\boxed{\\frac{\\pi}{6}}$",
     MMLU_ANGLE, "B"),
    ("The final answer is: $\\boxed{\\dfrac{2\\pi}{3}}$", MMLU_ANGLE, "D"),
    ("dim(V \u2229 W) can be as small as 3.\n\nThe final answer is: $\\boxed{3}$", MMLU_DIM, "D"),
    ("10*(10-1)/2 = 90/2 = 45.\n\nThe final answer is: $\\boxed{45}$", MMLU_EDGES, "D"),
    ("So the answer is 20.", MMLU_EDGES, "B"),
    ("Answer: 15/64", MMLU_PROB, "B"),
])
def test_boxed_value_equal_to_an_option_once_written_the_same_way(reply, options, expected):
    assert read_mcq(reply, options).letter == expected


def test_boxed_value_no_option_has_is_unreadable():
    assert read_mcq("The final answer is: $\\boxed{\\frac{49}{64}}$", MMLU_PROB).letter is None
    assert read_mcq("The final answer is: $\\boxed{4}$", MMLU_DIM).letter is None


@pytest.mark.parametrize("reply,expected", [
    ("\\[\\therefore\\ \\ \\mbox{At}\\ \\ \\mbox{Q},\\ \\ \\mbox{f}\\ \\ \\mbox{is a saddle point.}\\]\n"
     "\\[\\therefore\\ \\ \\mbox{f}\\ \\ \\mbox{has a local minimum at P and a saddle point at Q.}\\]", "D"),
    ("Putting both together, f has a local minimum at P and a saddle point at Q.", "D"),
    ("The answer is: f has a local maximum at P and a saddle point at Q.", "C"),
])
def test_answer_given_as_the_option_words_in_latex_or_prose(reply, expected):
    assert read_mcq(reply, MMLU_CRIT).letter == expected


def test_option_words_mentioned_for_two_options_is_no_answer():
    reply = "It cannot have a local maximum at P and at Q. Maybe a saddle point at P and at Q."
    assert read_mcq(reply, MMLU_CRIT).letter is None


@pytest.mark.parametrize("reply", [
    "<think>\nLet me compute. Therefore, k=1, n=0.\n\nSo answer is (B).\n\nBut the options include (D) k>1, which "
    "would be if multiple roots in [0,1], but not possible.\n\n(A) k=0 n=1, but we have one inside.\n\n",
    "<think>Okay, the walk. Take 3 steps. So, no, we don't return... wait, let me recount the turns",
    "<THINK>\nThe final answer is: $\\boxed{45}$ -- hmm, no, recount the vertices",
])
def test_reply_cut_off_inside_think_has_no_answer(reply):
    got = read_mcq(reply, ["k = 0 and n = 1.", "k = 1 and n = 0.", "k = n = 1.", "k > 1."] if "k=" in reply
                   else YN if "walk" in reply else MMLU_EDGES)
    assert got.letter is None and "think" in got.reason


def test_closed_think_block_still_reads_the_answer_after_it():
    assert read_mcq("<think>Maybe (A).</think>\nSo, no, we don't return to the starting point.", YN).letter == "B"


# Rules found while labelling the release's replies (tests/data/stability_labelled_replies.jsonl).

ROOTS = ["12*sqrt(2).", "6*sqrt(2).", "4*sqrt(2).", "1/(2*sqrt(2))."]
COUNTS = ["None.", "One.", "Four.", "Five."]
STATEMENTS = ["The system is consistent..", "The system has infinitely many solutions..",
              "The sum of any two solutions is a solution..", "Every solution is a scalar multiple of (-5, 1, 1, 0).."]


@pytest.mark.parametrize("reply,options,expected", [
    ("The answer is therefore -4\u221a2; the speed is\n\nThe final answer is: $\\boxed{4\\sqrt{2}}$", ROOTS, "C"),
    ("The final answer is: $\\boxed{12*sqrt(2)}$", ROOTS, "A"),
    ("So the answer is 1/(2\u221a2).", ROOTS, "D"),
    ("No k works, so the count is zero.\n\nThe final answer is: $\\boxed{0}$", COUNTS, "A"),
    ("The final answer is: $\\boxed{5}$", COUNTS, "D"),
    ("Therefore, option (C) is the false statement.", STATEMENTS, "C"),
    ("Thus, the largest order of an element is 12 (option C).", ["5.", "6.", "12.", "15."], "C"),
    ("No.\n\nHere's a breakdown:\n1.  You take 10 steps forward.\n2.  You take 3 steps backward.", YN, "B"),
    ("So, do you return to the starting point?\nNo, you don't return to the starting point because of the turn.",
     YN, "B"),
])
def test_rules_found_in_the_labelled_replies(reply, options, expected):
    assert read_mcq(reply, options).letter == expected


@pytest.mark.parametrize("reply,options", [
    # numbered list items are not conclusions: "1." is not option "1."
    ("Let me count.\n1. Understand the question.\n3. Count the trees.\nSo it depends on the degrees.",
     ["1.", "2.", "3.", "4."]),
    # a conclusion naming two letters names none
    ("Therefore, the set with the greatest cardinality is (C) or (D), both of size 2^c.", ABCD),
    # "each option:" introduces a list, it is no answer cue
    ("To see why, let's analyze each option:\n\n(A) the red book: too far left.\n(B) the green book: too far right.",
     ABCD),
    # a conclusion word followed by a number is arithmetic, not an answer
    ("We add them up, so 10 + 35 = 45 and we keep going", ["10.", "35.", "45.", "12."]),
])
def test_rules_found_in_the_labelled_replies_read_nothing_when_nothing_is_concluded(reply, options):
    assert read_mcq(reply, options).letter is None


@pytest.mark.parametrize("reply,expected", [
    ("1. Take 6 steps: 6 away.\n2. Turn left.\nSince you turned left, you do not return to the starting point.", "B"),
    ("Since you've taken 35 steps and turned right and left, you haven't returned to the starting point.", "B"),
    ("Since you are 18 units away, you will not be able to return to the starting point by facing forward.", "B"),
])
def test_navigate_denied_return_reads_no(reply, expected):
    assert read_mcq(reply, YN).letter == expected
    # only for the options Yes / No: the same words name nothing among other options
    assert read_mcq(reply, ["True", "False"]).letter is None


def test_conclusion_cues_never_crowd_out_the_answer():
    """Every line start is a conclusion position; they are capped apart from the answer cues, so an answer
    followed by a long explanation is still read."""
    reply = "The answer is (B).\n\nExplanation:\n" + "".join(f"step {i}: nothing to conclude\n" for i in range(200))
    assert read_mcq(reply, ABCD).letter == "B"


@pytest.mark.slow
def test_long_adversarial_replies_for_the_new_rules_are_linear():
    """200k-character replies aimed at the conclusion, LaTeX, quoted-words and <think> rules finish fast."""
    hostile = [("\n" * 199_999 + "No", YN), ("so, " * 50_000, YN), ("So, no\n" * 28_000, YN),
               ("sqrt(" * 40_000, MMLU_CRIT), ("you do not " * 18_000, YN), ("\\frac{" * 30_000, MMLU_PROB),
               ("local maximum at P and at Q. " * 7_000, MMLU_CRIT), ("<think>" * 28_000, YN),
               ("\\mbox{" * 30_000 + "}" * 30_000, MMLU_CRIT), ("3pi*" * 50_000, MMLU_ANGLE)]
    for reply, options in hostile:
        _assert_linear(reply, options)
        got = read_mcq(reply, options)
        assert got.letter is None or got.letter in LETTERS[: len(options)]
    assert read_mcq("\n" * 199_999 + "No", YN).letter == "B"
    assert read_mcq("<think>" * 28_000, YN).letter is None


@pytest.mark.parametrize("reply", ["I am not sure.\nOptions:\n- Yes\n- No", "Options:\n- Yes\n- No\n\nI cannot tell.",
                                   "Choices:\nYes\nNo\nThe walk is long."])
def test_a_listed_option_at_a_line_start_is_no_conclusion(reply):
    assert read_mcq(reply, YN).letter is None
