"""The run-to-run stability bank (the non-determinism paper): multiple-choice questions asked N times at temperature 0.

The non-determinism paper (sec. 4, Table 1) measures stability on eight multiple-choice subtasks, four from BIG-Bench
Hard and four MMLU subjects. The category names here are the upstream config names:

| category | upstream | built-in edition (offline) |
|---|---|---|
| ``navigate`` | BBH | generated: does a walk return to its start (2 options) |
| ``logical_deduction_three_objects`` | BBH | generated: order of 3 objects from 2 clues (3 options) |
| ``geometric_shapes`` | BBH | generated: what an SVG path or a closed point list draws (10 options) |
| ``ruin_names`` | BBH | **stand-in**: which edit of a title is a pun rather than a typo (4 options) |
| ``college_mathematics`` | MMLU | **stand-in**: generated arithmetic (4 options) |
| ``high_school_european_history`` | MMLU | **stand-in**: which of 4 dated events came first / last (4 options) |
| ``professional_accounting`` | MMLU | **stand-in**: generated depreciation, interest and margin sums (4 options) |
| ``public_relations`` | MMLU | **stand-in**: which term a definition names (4 options) |

The first three are faithful generated versions of the BBH tasks (the truth is computed, not written down). The
other five are only *stand-ins*: the real data are the BBH ``ruin_names`` set and the MMLU subjects, which the hub
loaders read (:func:`load_hub_items`, :func:`load_stability_items` with ``source="hf"`` or a local export).
Stand-ins are small and say so in their ``source`` (``builtin-standin``); they exist so every subtask runs offline
and so the offline models have something to answer, not to reproduce the paper's accuracies.

Every item has ``id``, ``category`` (the subtask), ``question``, ``options`` (the option texts, labelled A, B, C,
... in order), ``answer`` (the correct letter) and ``source``. The prompt lists the options as ``(A) text`` and
asks for a final line ``ANSWER: X``; :func:`parse_answer` (:func:`ub_core.parsing.mcq.read_mcq`) reads the reply.

Generation is deterministic: item i of a category is drawn from ``seed_sequence("stability/<category>/<i>", 0)``,
so ids and contents are stable across processes and versions of numpy's bit generator API.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ..parsing.mcq import read_mcq
from .base import seed_sequence

__all__ = ["BANK_VERSION", "SUBTASKS", "BBH_SUBTASKS", "MMLU_SUBTASKS", "STANDIN_SUBTASKS", "LETTERS",
           "DEFAULT_HUB_IDS", "StabilityItem", "stability_items", "find_stability_item", "parse_answer",
           "answer_instruction", "record_to_item", "load_hub_items", "load_stability_items", "SUBSET_SIZES",
           "FULL_SIZES"]

BANK_VERSION = "1"

BBH_SUBTASKS = ("navigate", "logical_deduction_three_objects", "geometric_shapes", "ruin_names")
MMLU_SUBTASKS = ("college_mathematics", "high_school_european_history", "professional_accounting",
                 "public_relations")
SUBTASKS = BBH_SUBTASKS + MMLU_SUBTASKS
#: Subtasks whose built-in edition is a stand-in, not the real task.
STANDIN_SUBTASKS = ("ruin_names",) + MMLU_SUBTASKS
DEFAULT_HUB_IDS = {"bbh": "lukaemon/bbh", "mmlu": "cais/mmlu"}
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Built-in sizes. "full" follows the non-determinism paper's Table 1 where the items are generated; the table-based
# stand-ins have as many items as their small tables give.
SUBSET_SIZES = {"navigate": 50, "logical_deduction_three_objects": 50, "geometric_shapes": 50, "ruin_names": 24,
                "college_mathematics": 50, "high_school_european_history": 30, "professional_accounting": 50,
                "public_relations": 24}
FULL_SIZES = {**SUBSET_SIZES, "navigate": 250, "logical_deduction_three_objects": 250, "geometric_shapes": 250,
              "college_mathematics": 100, "professional_accounting": 282}


def answer_instruction(n_options: int) -> str:
    letters = ", ".join(LETTERS[:n_options])
    return (f"Answer with the letter of the correct option on a final line of the form ANSWER: X, where X is one "
            f"of {letters}.")


@dataclass(frozen=True, eq=False)
class StabilityItem:
    """One multiple-choice question. ``options`` are the option texts; option i has the letter ``LETTERS[i]``."""

    id: str
    category: str
    question: str
    options: tuple[str, ...]
    answer: str
    source: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    bank = "stability"
    family = "mcq"

    def __post_init__(self):
        if self.category not in SUBTASKS:
            raise ValueError(f"item {self.id}: unknown stability subtask {self.category!r}")
        if not 2 <= len(self.options) <= len(LETTERS):
            raise ValueError(f"item {self.id}: needs 2 to {len(LETTERS)} options, got {len(self.options)}")
        if self.answer not in self.letters:
            raise ValueError(f"item {self.id}: answer {self.answer!r} is not one of {', '.join(self.letters)}")

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(LETTERS[: len(self.options)])

    @property
    def answer_index(self) -> int:
        return self.letters.index(self.answer)

    @property
    def regime(self) -> str:  # what `ub bank list` prints in its last column
        return self.source

    @property
    def prompt(self) -> str:
        """Question, the lettered options, and the answer-format instruction."""
        lines = [self.question.rstrip(), "", "Options:"]
        lines += [f"({letter}) {text}" for letter, text in zip(self.letters, self.options)]
        return "\n".join(lines) + "\n\n" + answer_instruction(len(self.options))

    full_prompt = prompt

    def to_record(self, with_prompt: bool = True) -> dict[str, Any]:
        """A JSON-serialisable record (an lm-eval document, an Inspect sample's metadata)."""
        rec = {"id": self.id, "bank": self.bank, "category": self.category, "question": self.question,
               "options": list(self.options), "answer": self.answer, "source": self.source,
               "metadata": dict(self.metadata)}
        if with_prompt:
            rec["prompt"] = self.prompt
        return rec

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "StabilityItem":
        try:
            return cls(id=str(record["id"]), category=str(record["category"]), question=str(record["question"]),
                       options=tuple(str(o) for o in record["options"]), answer=str(record["answer"]),
                       source=str(record["source"]), metadata=dict(record.get("metadata") or {}))
        except KeyError as exc:
            raise ValueError(f"not a stability item record: missing field {exc.args[0]!r}") from None


def parse_answer(text: Any, n_options: int, options: Sequence[str] | None = None) -> str | None:
    """The letter a reply chooses, or ``None`` when it cannot be read (the non-determinism paper's parsed answer, TARa).

    A thin wrapper around :func:`ub_core.parsing.mcq.read_mcq`: with ``options`` (the option texts in letter order) a
    reply may also name an option by its text or value (``No``, ``\\boxed{35}``); without them only letters are
    read. Use :func:`ub_core.parsing.mcq.read_mcq` directly for the reason a reply is unreadable."""
    read = read_mcq(text, list(options) if options is not None else n_options)
    return read.letter


# ------------------------------------------------------------------------------------------------ generators

def _rng(category: str, i: int) -> np.random.Generator:
    return np.random.default_rng(seed_sequence(f"stability/{category}/{i}", 0))


def _place(rng: np.random.Generator, correct: str, distractors: Sequence[str]) -> tuple[tuple[str, ...], str]:
    """Options with the correct text at a random position; returns (options, answer letter)."""
    opts = list(distractors)
    pos = int(rng.integers(0, len(opts) + 1))
    opts.insert(pos, correct)
    if len(set(opts)) != len(opts):
        raise AssertionError(f"duplicate options {opts}")  # generator bug, never model input
    return tuple(opts), LETTERS[pos]


# navigate --------------------------------------------------------------------------------------------------

_DIRS = ((0, 1), (1, 0), (0, -1), (-1, 0))  # north, east, south, west (clockwise)
_RELATIVE = {"forward": 0, "right": 1, "backward": 2, "left": 3}


def _walk(instructions: Sequence[tuple[str, Any]]) -> tuple[int, int]:
    """End position of a walk; instructions are ("turn", quarter turns clockwise) or ("step", (n, rel))."""
    x = y = 0
    heading = 0
    for kind, arg in instructions:
        if kind == "turn":
            heading = (heading + arg) % 4
        else:
            n, rel = arg
            dx, dy = _DIRS[(heading + rel) % 4]
            x, y = x + n * dx, y + n * dy
    return x, y


def _say(kind: str, arg: Any) -> str:
    if kind == "turn":
        return {1: "Turn right.", 2: "Turn around.", 3: "Turn left."}[arg]
    n, rel = arg
    unit = "step" if n == 1 else "steps"
    return f"Take {n} {unit}." if rel == 0 else f"Take {n} {unit} {[k for k, v in _RELATIVE.items() if v == rel][0]}."


def _navigate(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    rng = _rng("navigate", i)
    facing = bool(i % 4 >= 2)  # half the walks keep facing forward and step sideways, half turn
    want_return = i % 2 == 0
    steps: list[tuple[str, Any]] = []
    for _ in range(int(rng.integers(2, 6))):
        if not facing and rng.random() < 0.4:
            steps.append(("turn", int(rng.integers(1, 4))))
        rel = int(rng.integers(0, 4)) if facing else 0
        steps.append(("step", (int(rng.integers(1, 10)), rel)))
    x, y = _walk(steps)
    if want_return:
        # close the walk: walk back along each axis (the truth below is still computed by simulation)
        heading = 0
        for kind, arg in steps:
            if kind == "turn":
                heading = (heading + arg) % 4
        for delta, d_pos, d_neg in ((x, 3, 1), (y, 2, 0)):
            if delta == 0:
                continue
            target_dir = d_pos if delta > 0 else d_neg
            if facing:
                steps.append(("step", (abs(delta), (target_dir - heading) % 4)))
            else:
                turn = (target_dir - heading) % 4
                if turn:
                    steps.append(("turn", turn))
                    heading = target_dir
                steps.append(("step", (abs(delta), 0)))
    elif (x, y) == (0, 0):
        steps.append(("step", (int(rng.integers(1, 10)), int(rng.integers(0, 4)) if facing else 0)))
    returns = _walk(steps) == (0, 0)
    lead = "Always face forward. " if facing else ""
    text = lead + " ".join(_say(k, a) for k, a in steps)
    question = ("Someone starts at a point and follows these instructions: " + text
                + "\nDo they end up back at the starting point?")
    return question, ("Yes", "No"), "A" if returns else "B", {"returns": returns}


# logical deduction over three objects -----------------------------------------------------------------------

_SCENES = (
    {"setting": "Three books stand on a shelf, in some order from left to right: {objs}.",
     "pool": ("red", "green", "blue", "yellow", "black", "white", "orange"), "label": "the {o} book",
     "places": ("leftmost", "in the middle", "rightmost"), "place": "{O} is {p}.",
     "before": "{A} is to the left of {b}.", "ask": "Which book is {p}?"},
    {"setting": "Three runners finished a race with no ties: {objs}.",
     "pool": ("Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus"), "label": "{o}",
     "places": ("first", "second", "last"), "place": "{O} finished {p}.",
     "before": "{A} finished ahead of {b}.", "ask": "Who finished {p}?"},
    {"setting": "A stall sells three fruits at different prices: {objs}.",
     "pool": ("apples", "pears", "plums", "mangoes", "kiwis", "figs", "limes"), "label": "the {o}",
     "places": ("the cheapest", "the second-cheapest", "the most expensive"), "place": "{O} are {p}.",
     "before": "{A} cost less than {b}.", "ask": "Which fruit is {p}?"},
)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _logical(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    import itertools

    rng = _rng("logical_deduction_three_objects", i)
    scene = _SCENES[i % len(_SCENES)]
    pool = scene["pool"]
    objs = [scene["label"].format(o=pool[j]) for j in rng.permutation(len(pool))[:3]]
    order = [int(j) for j in rng.permutation(3)]  # order[k] = the object at place k

    def clues_for(perm) -> set:
        pos = {obj: k for k, obj in enumerate(perm)}
        out = {("place", a, pos[a]) for a in range(3)}
        out |= {("before", a, b) for a in range(3) for b in range(3) if a != b and pos[a] < pos[b]}
        return out

    asked = int(rng.integers(0, 3))
    # never state the asked place outright: the answer must be deduced
    true_clues = sorted(clues_for(order) - {("place", order[asked], asked)})
    perms = list(itertools.permutations(range(3)))
    for _ in range(200):
        pick = [true_clues[j] for j in rng.choice(len(true_clues), size=2, replace=False)]
        if sum(1 for p in perms if set(pick) <= clues_for(p)) == 1:  # the clues pin down the order
            break
    else:  # pragma: no cover - two clues always suffice for three objects
        raise AssertionError("no determining pair of clues")

    def say(clue) -> str:
        if clue[0] == "place":
            return scene["place"].format(O=_cap(objs[clue[1]]), p=scene["places"][clue[2]])
        return scene["before"].format(A=_cap(objs[clue[1]]), b=objs[clue[2]])

    question = (scene["setting"].format(objs=", ".join(objs)) + " " + " ".join(say(c) for c in pick) + "\n"
                + scene["ask"].format(p=scene["places"][asked]))
    correct = objs[order[asked]]
    opts, ans = _place(rng, correct, [o for o in objs if o != correct])
    return question, opts, ans, {"order": [objs[k] for k in order]}


# geometric shapes ------------------------------------------------------------------------------------------

SHAPE_OPTIONS = ("circle", "heptagon", "hexagon", "kite", "line", "octagon", "pentagon", "rectangle", "sector",
                 "triangle")
_POLYGONS = {3: "triangle", 5: "pentagon", 6: "hexagon", 7: "heptagon", 8: "octagon"}


def _fmt(v: float) -> str:
    return f"{v:.2f}"


def _shape_points(rng: np.random.Generator, kind: str) -> list[tuple[float, float]]:
    cx, cy = (float(rng.uniform(30, 70)) for _ in range(2))
    if kind == "line":
        return [(cx, cy), (cx + float(rng.uniform(-30, 30)), cy + float(rng.uniform(15, 30)))]
    if kind == "rectangle":
        w, h = float(rng.uniform(10, 30)), float(rng.uniform(10, 30))
        if abs(w - h) < 3:  # a square is also a kite (a rhombus): keep the answer unique
            h += 6
        return [(cx, cy), (cx + w, cy), (cx + w, cy + h), (cx, cy + h)]
    if kind == "kite":
        a, c, b = float(rng.uniform(8, 15)), float(rng.uniform(20, 35)), float(rng.uniform(8, 20))
        return [(cx, cy - a), (cx + b, cy), (cx, cy + c), (cx - b, cy)]
    k = {v: n for n, v in _POLYGONS.items()}[kind]
    # a convex polygon: k points on a circle, at least 20 degrees apart, so no three are nearly collinear
    gap = 2 * math.pi / k
    angles = np.sort(np.arange(k) * gap + rng.uniform(0, gap - math.radians(20), size=k) + rng.uniform(0, 2 * math.pi))
    r = float(rng.uniform(15, 30))
    return [(cx + r * math.cos(t), cy + r * math.sin(t)) for t in angles]


def _geometric(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    rng = _rng("geometric_shapes", i)
    kinds = ("triangle", "pentagon", "hexagon", "heptagon", "octagon", "line", "rectangle", "kite")
    kind = kinds[i % len(kinds)]
    pts = [(round(x, 2), round(y, 2)) for x, y in _shape_points(rng, kind)]
    start = int(rng.integers(0, len(pts)))
    pts = pts[start:] + pts[:start]
    if (i // len(kinds)) % 3 == 2 and kind != "line":
        listed = ", ".join(f"({_fmt(x)}, {_fmt(y)})" for x, y in pts)
        question = (f"Straight segments join these points in order, and a last segment joins the final point back "
                    f"to the first: {listed}. What shape is drawn?")
    else:
        path = f"M {_fmt(pts[0][0])},{_fmt(pts[0][1])} " + " ".join(f"L {_fmt(x)},{_fmt(y)}" for x, y in pts[1:])
        if kind != "line":
            path += f" L {_fmt(pts[0][0])},{_fmt(pts[0][1])}"
        question = f'This SVG path element <path d="{path}"/> draws a'
    return question, SHAPE_OPTIONS, LETTERS[SHAPE_OPTIONS.index(kind)], {"shape": kind, "vertices": len(pts)}


# ruin names (stand-in) -------------------------------------------------------------------------------------

# (title, an edit that turns a word into another real word). Our own small list; the BBH task is the real data.
_PUNS = (("star wars", "star warts"), ("jurassic park", "jurassic pork"), ("the godfather", "the codfather"),
         ("pulp fiction", "pulp friction"), ("finding nemo", "finding memo"), ("iron man", "iron pan"),
         ("the sound of music", "the hound of music"), ("the beatles", "the beagles"),
         ("the rolling stones", "the rolling scones"), ("jaws", "paws"), ("the shining", "the whining"),
         ("blade runner", "blame runner"), ("toy story", "soy story"), ("pink floyd", "pink flood"))
_ODD = "qxzj"


def _typo(rng: np.random.Generator, title: str, taken: set[str]) -> str:
    """A misspelling: one letter replaced by q, x, z or j, or one letter doubled (never an English word here)."""
    for _ in range(100):
        chars = list(title)
        letters = [k for k, ch in enumerate(chars) if ch.isalpha()]
        k = letters[int(rng.integers(0, len(letters)))]
        if rng.random() < 0.7:
            chars[k] = _ODD[int(rng.integers(0, len(_ODD)))]
        else:
            chars.insert(k, chars[k])
        out = "".join(chars)
        if out != title and out not in taken:
            return out
    raise AssertionError("no typo found")  # pragma: no cover


def _ruin(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    rng = _rng("ruin_names", i)
    title, pun = _PUNS[i % len(_PUNS)]
    taken = {title, pun}
    typos = []
    for _ in range(3):
        t = _typo(rng, title, taken)
        taken.add(t)
        typos.append(t)
    question = (f"Which of these edits of the title '{title}' is a joke, turning a word into a different real "
                f"word, rather than a misspelling?")
    opts, ans = _place(rng, pun, typos)
    return question, opts, ans, {"standin": True}


# college mathematics (stand-in: arithmetic) ----------------------------------------------------------------

def _numeric_options(rng: np.random.Generator, truth: int, spread: int) -> tuple[tuple[str, ...], str]:
    wrong: set[int] = set()
    while len(wrong) < 3:
        d = int(rng.integers(1, spread + 1)) * (1 if rng.random() < 0.5 else -1)
        if truth + d != truth:
            wrong.add(truth + d)
    return _place(rng, str(truth), [str(w) for w in sorted(wrong)])


def _arithmetic(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    rng = _rng("college_mathematics", i)
    form = i % 4
    if form == 0:
        a, b, c = (int(rng.integers(12, 99)) for _ in range(3))
        question, truth = f"What is {a} × {b} − {c}?", a * b - c
    elif form == 1:
        n, m = int(rng.integers(100, 999)), int(rng.integers(5, 14))
        question, truth = f"What is the remainder when {n} is divided by {m}?", n % m
        others = [v for v in range(m) if v != truth]
        wrong = sorted(int(others[j]) for j in rng.choice(len(others), size=3, replace=False))
        opts, ans = _place(rng, str(truth), [str(v) for v in wrong])
        return question, opts, ans, {"standin": True}
    elif form == 2:
        n = int(rng.integers(10, 60))
        question, truth = f"What is the sum of the integers from 1 to {n}?", n * (n + 1) // 2
    else:
        a, b = int(rng.integers(2, 9)), int(rng.integers(2, 6))
        question, truth = f"What is {a} to the power {b}?", a ** b
    opts, ans = _numeric_options(rng, truth, max(3, abs(truth) // 10))
    return question, opts, ans, {"standin": True}


# professional accounting (stand-in: generated sums) --------------------------------------------------------

def _accounting(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    rng = _rng("professional_accounting", i)
    form = i % 3
    if form == 0:
        life = int(rng.integers(3, 11))
        per_year = int(rng.integers(2, 40)) * 500
        salvage = int(rng.integers(0, 10)) * 1000
        cost = per_year * life + salvage
        question = (f"Equipment is bought for ${cost:,} and is expected to last {life} years with a salvage value of "
                    f"${salvage:,}. What is the yearly straight-line depreciation?")
        truth = per_year
        wrong = {cost // life, (cost + salvage) // life, per_year + 500 * int(rng.integers(1, 4))} - {truth}
    elif form == 1:
        principal = int(rng.integers(2, 50)) * 1000
        rate = int(rng.integers(2, 12))
        years = int(rng.integers(1, 6))
        truth = principal * rate * years // 100
        question = (f"A loan of ${principal:,} carries simple interest of {rate}% a year. How much interest is owed "
                    f"after {years} years?")
        wrong = {principal * rate // 100, truth + principal * rate // 200,
                 principal * (rate + 1) * years // 100} - {truth}
    else:
        revenue = int(rng.integers(20, 200)) * 1000
        pct = int(rng.integers(10, 70))
        cogs = revenue * (100 - pct) // 100
        question = (f"A company has revenue of ${revenue:,} and cost of goods sold of ${cogs:,}. What is its gross "
                    f"margin, in percent of revenue?")
        opts, ans = _place(rng, f"{pct}%", [f"{v}%" for v in sorted({100 - pct, pct + 5, pct - 5} - {pct})][:3])
        return question, opts, ans, {"standin": True}
    wrong_list = sorted(wrong)
    k = 1
    while len(wrong_list) < 3:
        cand = truth + 250 * k
        k += 1
        if cand not in wrong_list and cand != truth:
            wrong_list.append(cand)
    opts, ans = _place(rng, f"${truth:,}", [f"${w:,}" for w in wrong_list[:3]])
    return question, opts, ans, {"standin": True}


# high school European history (stand-in: dated events) ------------------------------------------------------

_EVENTS = (("the fall of Constantinople to the Ottomans", 1453), ("Luther's Ninety-five Theses", 1517),
           ("the defeat of the Spanish Armada", 1588), ("the Peace of Westphalia", 1648),
           ("the Glorious Revolution in England", 1688), ("the storming of the Bastille", 1789),
           ("the Battle of Waterloo", 1815), ("the revolutions of the 'Springtime of Nations'", 1848),
           ("the proclamation of the German Empire", 1871), ("the assassination of Franz Ferdinand", 1914),
           ("the October Revolution in Russia", 1917), ("the Treaty of Rome founding the EEC", 1957),
           ("the fall of the Berlin Wall", 1989))


def _history(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    rng = _rng("high_school_european_history", i)
    picks = [_EVENTS[j] for j in rng.choice(len(_EVENTS), size=4, replace=False)]
    earliest = i % 2 == 0
    target = min(picks, key=lambda e: e[1]) if earliest else max(picks, key=lambda e: e[1])
    question = f"Which of these events in European history happened {'first' if earliest else 'last'}?"
    opts, ans = _place(rng, target[0], [e[0] for e in picks if e is not target])
    return question, opts, ans, {"standin": True, "years": {e[0]: e[1] for e in picks}}


# public relations (stand-in: terms) ------------------------------------------------------------------------

_TERMS = (("press release", "a written announcement an organisation sends to journalists"),
          ("crisis communication", "how an organisation informs the public during an emergency that threatens it"),
          ("media kit", "a packet of background facts and images prepared for reporters"),
          ("stakeholder", "any group that affects or is affected by an organisation's actions"),
          ("spokesperson", "the person authorised to speak for an organisation"),
          ("embargo", "a request that reporters not publish information before a set time"),
          ("op-ed", "an opinion article by an outside author, printed opposite a paper's editorials"),
          ("agenda setting", "the media's influence on which issues the public thinks are important"),
          ("earned media", "publicity gained through coverage rather than paid advertising"),
          ("press conference", "an event where representatives answer questions from many reporters at once"),
          ("boilerplate", "the standard paragraph describing an organisation at the end of its announcements"),
          ("two-way symmetrical model", "communication in which an organisation and its publics adapt to each "
                                        "other through dialogue"))


def _public_relations(i: int) -> tuple[str, tuple[str, ...], str, dict]:
    rng = _rng("public_relations", i)
    term, definition = _TERMS[i % len(_TERMS)]
    others = [t for t, _ in _TERMS if t != term]
    distractors = [others[j] for j in rng.choice(len(others), size=3, replace=False)]
    question = f"In public relations, which term means {definition}?"
    opts, ans = _place(rng, term, distractors)
    return question, opts, ans, {"standin": True}


_GENERATORS: dict[str, Callable[[int], tuple]] = {
    "navigate": _navigate, "logical_deduction_three_objects": _logical, "geometric_shapes": _geometric,
    "ruin_names": _ruin, "college_mathematics": _arithmetic, "high_school_european_history": _history,
    "professional_accounting": _accounting, "public_relations": _public_relations,
}


def _check_subtasks(subtasks: Iterable[str] | None) -> tuple[str, ...]:
    if subtasks is None:
        return SUBTASKS
    subtasks = tuple(subtasks)
    bad = [s for s in subtasks if s not in SUBTASKS]
    if bad:
        raise ValueError(f"unknown stability subtask {bad[0]!r}; known: {', '.join(SUBTASKS)}")
    return subtasks


@functools.lru_cache(maxsize=4)
def _builtin(size: str) -> tuple[StabilityItem, ...]:
    sizes = FULL_SIZES if size == "full" else SUBSET_SIZES
    items = []
    for cat in SUBTASKS:
        source = "builtin-standin" if cat in STANDIN_SUBTASKS else "builtin"
        seen: set[tuple] = set()
        for i in range(sizes[cat]):
            # a repeated question is drawn again from a further stream (deterministic, and the first items of
            # "full" stay those of "subset")
            for k in range(100):
                question, options, answer, meta = _GENERATORS[cat](i + 100_000 * k)
                if (question, options) not in seen:
                    seen.add((question, options))
                    break
            items.append(StabilityItem(id=f"stab_{cat}_{i:03d}", category=cat, question=question,
                                       options=tuple(options), answer=answer, source=source, metadata=meta))
    return tuple(items)


def stability_items(size: str | None = None, subtasks: Iterable[str] | None = None) -> tuple[StabilityItem, ...]:
    """The built-in bank (``size`` ``"subset"``, the default, or ``"full"``), optionally some subtasks only."""
    if size not in (None, "subset", "full"):
        raise ValueError(f"unknown bank size {size!r}; expected subset or full")
    wanted = set(_check_subtasks(subtasks))
    return tuple(it for it in _builtin(size or "subset") if it.category in wanted)


@functools.lru_cache(maxsize=1)
def _prompt_index() -> dict[str, StabilityItem]:
    return {it.prompt: it for size in ("subset", "full") for it in _builtin(size)}


@functools.lru_cache(maxsize=1)
def _ending_index() -> tuple[int, dict[str, list[tuple[str, StabilityItem]]]]:
    """The prompts by their last ``k`` characters (``k`` the shortest prompt's length), each bucket in the order
    of :func:`_prompt_index`: a text that ends with a prompt ends with that prompt's last ``k`` characters."""
    index = _prompt_index()
    k = min((len(p) for p in index), default=0)
    buckets: dict[str, list[tuple[str, StabilityItem]]] = {}
    for prompt, item in index.items():
        buckets.setdefault(prompt[len(prompt) - k:], []).append((prompt, item))
    return k, buckets


def find_stability_item(text: str) -> StabilityItem | None:
    """The built-in item whose prompt ``text`` is (or ends with, after a few-shot prefix or a system preamble)."""
    text = str(text)
    index = _prompt_index()
    hit = index.get(text) or index.get(text.strip())
    if hit is not None:
        return hit
    # the prompt was wrapped: match the question at the end (the first in index order, as a scan would)
    text = text.rstrip()
    k, buckets = _ending_index()
    if len(text) < k:
        return None
    for prompt, item in buckets.get(text[len(text) - k:], ()):
        if text.endswith(prompt):
            return item
    return None


# ------------------------------------------------------------------------------------------------ hub loaders

def _bbh_record(record: Mapping[str, Any], where: str) -> tuple[str, tuple[str, ...], str]:
    text = str(record["input"])
    target = str(record["target"]).strip()
    head, sep, tail = text.rpartition("\nOptions:\n")
    if not sep:
        raise ValueError(f"{where}: BBH input has no 'Options:' block")
    options: list[str] = []
    letters: list[str] = []
    for line in tail.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("(") and len(line) >= 3 and line[2] == ")":
            letters.append(line[1])
            options.append(line[3:].strip())
        elif line.startswith("- "):
            options.append(line[2:].strip())
        else:
            raise ValueError(f"{where}: cannot read option line {line[:60]!r}")
    if letters and letters != list(LETTERS[: len(letters)]):
        raise ValueError(f"{where}: option letters {''.join(letters)} are not A, B, C, ... in order")
    if target.startswith("(") and target.endswith(")") and len(target) == 3:
        answer = target[1]
    else:
        folded = [o.casefold() for o in options]
        if target.casefold() not in folded:
            raise ValueError(f"{where}: target {target[:40]!r} is not one of the options")
        answer = LETTERS[folded.index(target.casefold())]
    return head.strip(), tuple(options), answer


def _mmlu_record(record: Mapping[str, Any], where: str) -> tuple[str, tuple[str, ...], str]:
    options = tuple(str(c) for c in record["choices"])
    raw = record["answer"]
    if isinstance(raw, str) and raw.strip().upper() in LETTERS[: len(options)] and not raw.strip().isdigit():
        answer = raw.strip().upper()
    else:
        try:
            k = int(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: MMLU answer {raw!r} is neither an index nor a letter") from None
        if not 0 <= k < len(options):
            raise ValueError(f"{where}: MMLU answer index {k} out of range for {len(options)} choices")
        answer = LETTERS[k]
    return str(record["question"]).strip(), options, answer


def record_to_item(record: Mapping[str, Any], subtask: str, index: int, source: str,
                   split: str = "test") -> StabilityItem:
    """One upstream record -> a :class:`StabilityItem`. BBH records have ``input`` and ``target``
    (``lukaemon/bbh``); MMLU records have ``question``, ``choices`` and ``answer`` (``cais/mmlu``)."""
    _check_subtasks([subtask])
    where = f"{source} {subtask} record {index}"
    if "input" in record and "target" in record:
        question, options, answer = _bbh_record(record, where)
    elif {"question", "choices", "answer"} <= set(record):
        question, options, answer = _mmlu_record(record, where)
    else:
        raise ValueError(f"{where}: expected BBH fields (input, target) or MMLU fields (question, choices, answer), "
                         f"got {', '.join(sorted(record)) or 'none'}")
    return StabilityItem(id=f"{subtask}_{split}_{index:04d}", category=subtask, question=question, options=options,
                         answer=answer, source=source)


_EXTS = {".parquet": "parquet", ".json": "json", ".jsonl": "json"}


def _local_files(root: Path, subtask: str, split: str) -> list[Path]:
    """Export files of ``subtask`` under ``root``: a folder named after it (the hub's parquet layout) or a file
    whose stem is the subtask; files mentioning ``split`` win when some do."""
    found = [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in _EXTS
             and (subtask in p.relative_to(root).parts[:-1] or p.stem.split(".")[0] == subtask)]
    with_split = [p for p in found if split in p.name]
    return with_split or found


def _read_files(files: Sequence[Path]) -> list[dict]:
    from datasets import load_dataset

    kinds = {_EXTS[p.suffix] for p in files}
    if len(kinds) != 1:
        raise ValueError(f"mixed file types for one subtask: {', '.join(str(p) for p in files)}")
    ds = load_dataset(kinds.pop(), data_files=[str(p) for p in files], split="train")
    return [dict(r) for r in ds]


def load_hub_items(subtask: str, source: str | None = None, split: str = "test",
                   limit: int | None = None) -> list[StabilityItem]:
    """Items of ``subtask`` from the hub or a local export, normalised.

    ``source``: ``None`` (the default hub id: ``lukaemon/bbh`` for BBH subtasks, ``cais/mmlu`` for MMLU ones), an
    HF dataset id (loaded as ``load_dataset(id, subtask, split=split)``), a parquet/JSON/JSONL file holding this
    subtask's records, or a folder of such exports (``<subtask>/<split>-*.parquet`` as on the hub, or
    ``<subtask>.json``). Records that do not fit the upstream schema raise a one-line ``ValueError``.
    """
    _check_subtasks([subtask])
    if source is None:
        source = DEFAULT_HUB_IDS["bbh" if subtask in BBH_SUBTASKS else "mmlu"]
    path = Path(source).expanduser()
    if path.is_file():
        if path.suffix not in _EXTS:
            raise ValueError(f"{path}: expected a .parquet, .json or .jsonl file")
        records = _read_files([path])
    elif path.is_dir():
        files = _local_files(path, subtask, split)
        if not files:
            raise ValueError(f"{path}: no parquet/json export for subtask {subtask!r} (expected {subtask}/*.parquet "
                             f"or {subtask}.json)")
        records = _read_files(files)
    else:
        from datasets import load_dataset

        try:
            records = [dict(r) for r in load_dataset(source, subtask, split=split)]
        except Exception as exc:  # noqa: BLE001 - hub/network errors become one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise ValueError(f"cannot load {source!r} config {subtask!r} split {split!r} "
                             f"({type(exc).__name__}: {first[:200]})") from None
    if limit is not None:
        records = records[: int(limit)]
    return [record_to_item(r, subtask, i, str(source), split) for i, r in enumerate(records)]


def load_stability_items(subtasks: Iterable[str] | None = None, source: str = "builtin", *,
                         bbh: str | None = None, mmlu: str | None = None, split: str = "test",
                         limit: int | None = None, size: str | None = None) -> list[StabilityItem]:
    """Items for the chosen subtasks (default: all eight), at most ``limit`` per subtask.

    ``source``: ``builtin`` (the generated bank and stand-ins, offline), ``hf`` (the hub: ``bbh`` / ``mmlu`` give
    the dataset ids or local exports, default ``lukaemon/bbh`` and ``cais/mmlu``), or a path / HF id used for every
    chosen subtask.
    """
    chosen = _check_subtasks(subtasks)
    if limit is not None and int(limit) < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    out: list[StabilityItem] = []
    for cat in chosen:
        if source == "builtin":
            items = list(stability_items(size, [cat]))
            items = items[: int(limit)] if limit is not None else items
        elif source == "hf":
            src = bbh if cat in BBH_SUBTASKS else mmlu
            items = load_hub_items(cat, src, split=split, limit=limit)
        else:
            items = load_hub_items(cat, source, split=split, limit=limit)
        out.extend(items)
    return out
