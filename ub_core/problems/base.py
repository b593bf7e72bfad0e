"""The :class:`Problem` record shared by every bank, and the answer-format instructions of our prompts.

A problem's ground truth is a pure function of (problem id, seed, size): the sampler is driven by a
:class:`numpy.random.SeedSequence` built from the seed and a SHA-256 digest of the id, so two processes (or two
machines) produce bit-identical reference draws, and a log can always be rescored from the problem id alone.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # parsing is imported when a reply is parsed, not when a bank is listed
    from ..parsing import Parsed

__all__ = ["Problem", "ANSWER_FORMATS", "SUPPORT_KINDS", "MAX_USABLE_MAGNITUDE", "instruction_for",
           "list_instruction", "requested_list_size", "seed_sequence"]

#: The largest |value| a reply may carry and still be scored (the usable-value rule of :meth:`Problem.check_value`).
#: Beyond it a value is an out-of-support failure with its reason, like one outside the distribution's bounds.
#: Why 1e150: the metrics square differences and sum about 10^4 of them (sample variances, the spread of WDZ's
#: permutation null): (2e150)^2 * 10^4 = 4e304, inside the float range (~1.8e308) with room to spare, while
#: 1e200 or 1e308 would overflow there. (The metrics themselves now rescale and survive any finite input, but a
#: distance such as W1 between values near 1e308 is itself beyond the float range, and no target of any bank
#: comes near 1e150: the heaviest tails draw ~1e40 at most in 10^4 draws.) Such a reply is a failure that the
#: retry path resamples, never a value that ends the run.
MAX_USABLE_MAGNITUDE = 1e150

ANSWER_FORMATS = ("number", "integer", "option", "permutation")
SUPPORT_KINDS = ("continuous", "discrete", "categorical", "permutation", "mixed")

# Our own wording. Each asks for the braces format that ub_core.parsing reads first. The examples are placeholders
# ("{number}"), never a concrete value: a sample value in the prompt would anchor the model's answers.
_INSTRUCTIONS = {
    "number": "Answer with a single number written inside curly braces, in the form {number}, and nothing else.",
    "integer": "Answer with a single whole number written inside curly braces, in the form {whole number}, "
               "and nothing else.",
    "option": "Answer with exactly one of the options {options} written inside curly braces, in the form "
              "{option}, and nothing else.",
    "permutation": "Answer with all the items in your order as a comma-separated list inside curly braces, "
                   "in the form {item, item, ...}, and nothing else.",
}


def instruction_for(answer_format: str, options: Sequence[str] = ()) -> str:
    """The answer-format instruction appended to a prompt."""
    if answer_format not in _INSTRUCTIONS:
        raise ValueError(f"unknown answer format {answer_format!r}; expected one of {ANSWER_FORMATS}")
    if answer_format != "option":
        return _INSTRUCTIONS[answer_format]
    if any("\n" in o for o in options):
        # multi-line outcomes (printed output): one block per option, so lines and commas do not mix
        blocks = "\n\n".join(f"Option {i + 1}:\n{o}" for i, o in enumerate(options))
        return ("Answer with exactly one of the options below, copying all of its lines inside curly braces, in "
                "the form {option}, and nothing else.\n\n" + blocks)
    return _INSTRUCTIONS["option"].replace("{options}", "(" + ", ".join(options) + ")")


_LIST_INSTRUCTION = ("Give {k} independent values, each drawn afresh, as a comma-separated list inside curly "
                     "braces, in the form {{value, value, ...}}, and nothing else.")
_LIST_SIZE_RE = re.compile(r"Give (\d+) independent values, each drawn afresh")


def list_instruction(k: int) -> str:
    """The instruction for list prompting (UnpredictaBench, sec. 5.3): ``k`` values in one reply."""
    return _LIST_INSTRUCTION.format(k=int(k))


def requested_list_size(prompt: str) -> int:
    """How many values a prompt asks for: ``k`` for a list-prompting instruction, else 1."""
    m = _LIST_SIZE_RE.search(prompt or "")
    return int(m.group(1)) if m else 1


def seed_sequence(problem_id: str, seed: int) -> np.random.SeedSequence:
    """Seed sequence for (problem id, seed): stable across processes, platforms and Python versions.

    ``seed`` is any integer >= 0. numpy splits a seed of 2**32 or more into several 32-bit words, so no two seeds
    share a stream (seeds below 2**32 give the streams they always gave); a negative seed is a ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    digest = hashlib.sha256(problem_id.encode("utf-8")).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    return np.random.SeedSequence([int(seed), *words])


@dataclass(frozen=True, eq=False)
class Problem:
    """One benchmark problem.

    ``sampler(rng, size)`` returns ``size`` reference values of the *scored scalar*: the number itself for numeric
    targets, the 0-based option code for categorical ones, Lehmer Z1 for permutations.
    """

    id: str
    bank: str
    category: str
    task_type: str
    family: str
    params: Mapping[str, Any]
    regime: str
    modality: str
    support: str
    answer_format: str
    prompt: str
    sampler: Callable[[np.random.Generator, int], np.ndarray] = field(repr=False)
    subcategory: str | None = None
    options: tuple[str, ...] = ()
    low: float = -math.inf
    high: float = math.inf
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # False for prompts that carry their own answer instruction (the official release's published prompts).
    append_instruction: bool = True
    # The published UnpredictaBench uid of the release problem this one follows (KS@N bank), else None.
    uid: str | None = None
    # The version of the registered bank that built this problem: it keys the ground-truth cache. None for problems
    # from outside the registered banks (a user's dataset, the official release), whose truth is never cached.
    bank_version: str | None = None

    def __post_init__(self):
        if self.answer_format not in ANSWER_FORMATS:
            raise ValueError(f"{self.id}: unknown answer format {self.answer_format!r}")
        if self.support not in SUPPORT_KINDS:
            raise ValueError(f"{self.id}: unknown support kind {self.support!r}")

    # ---------------------------------------------------------------- prompts

    @property
    def instruction(self) -> str:
        return instruction_for(self.answer_format, self.options)

    def list_prompt(self, k: int) -> str:
        """The task text asking for ``k`` values in one reply (numeric problems only)."""
        if self.answer_format not in ("number", "integer"):
            raise ValueError(f"{self.id}: list prompting needs a numeric problem, not {self.answer_format!r}")
        return f"{self.prompt}\n\n{list_instruction(k)}"

    @property
    def full_prompt(self) -> str:
        """The task text followed by our answer-format instruction (verbatim prompts are left as they are)."""
        if not self.append_instruction:
            return self.prompt
        return f"{self.prompt}\n\n{self.instruction}"

    # ---------------------------------------------------------------- ground truth

    def draw(self, size: int, seed: int = 0) -> np.ndarray:
        """Fresh reference draws, bypassing the cache (pure function of id, seed, size)."""
        rng = np.random.default_rng(seed_sequence(self.id, seed))
        return np.asarray(self.sampler(rng, int(size)), dtype=float)

    def truth(self, size: int = 10_000, seed: int = 0) -> np.ndarray:
        """The ``size`` reference draws for ``seed``, from the on-disk cache when present."""
        from ..cache import cached_truth

        return cached_truth(self, size=size, seed=seed)

    # ---------------------------------------------------------------- answers

    def parse(self, text: Any) -> Parsed:
        """Turn one raw model reply into the scored scalar, or a failure with a one-line reason."""
        from .. import parsing
        from ..parsing import Parsed

        if self.answer_format == "option":
            res = parsing.parse_option(text, self.options)
            return Parsed.success(float(res.value)) if res.ok else res
        if self.answer_format == "permutation":
            res = parsing.parse_permutation(text, self.options)
            if not res.ok:
                return res
            from ..metrics import lehmer_z1

            return Parsed.success(float(lehmer_z1(res.value)))
        res = parsing.parse_number(text)
        if not res.ok:
            return res
        return self.check_value(res.value)

    def parse_many(self, text: Any) -> tuple[list[float], list[str]]:
        """All values of a list reply (list prompting): (valid scored values, failure reasons)."""
        from .. import parsing

        res = parsing.parse_number_list(text)
        pieces_failed: list[str] = []
        if res.ok:
            items = res.value
        else:
            # one bad element should not discard the rest: split the answer region and parse each piece alone
            region = parsing.extract_answer(text) if isinstance(text, str) else None
            pieces = [x for x in re.split(r"[;\n]|,\s+", region or "") if x.strip()]
            parsed = [parsing.parse_number(x) for x in pieces]
            items = [r.value for r in parsed if r.ok]
            if not items:
                return [], [res.error or "unparseable list"]
            pieces_failed = [r.error or "unparseable element" for r in parsed if not r.ok]
        values, failures = self.check_values(items)
        return values, pieces_failed + failures

    def check_values(self, items: Any) -> tuple[list[float], list[str]]:
        """Validate already-parsed values one by one: (valid scored values, failure reasons)."""
        values, failures = [], []
        for v in items:
            chk = self.check_value(v)
            if chk.ok:
                values.append(float(chk.value))
            else:
                failures.append(chk.error or "invalid value")
        return values, failures

    def check_value(self, value: Any) -> Parsed:
        """Validate an already-parsed value (a number, an option label, or a list of items for permutations).

        Usable value: a finite number with ``|value| <= MAX_USABLE_MAGNITUDE`` (1e150; see that constant), then
        the problem's own support (integer-ness, bounds). Anything else is a failure with a one-line reason.
        """
        from .. import parsing
        from ..parsing import Parsed

        if self.answer_format == "option" and isinstance(value, str):
            return self.parse(value)
        if self.answer_format == "permutation" and isinstance(value, (list, tuple)):
            return self.parse("{" + ", ".join(str(v) for v in value) + "}")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            return Parsed.failure(f"expected a number, got {type(value).__name__}")
        try:
            value = float(value)
        except OverflowError:  # an int too large for a float
            return Parsed.failure(f"value beyond the usable magnitude {MAX_USABLE_MAGNITUDE:g}")
        if not math.isfinite(value):
            return Parsed.failure(f"non-finite value {value}")
        if abs(value) > MAX_USABLE_MAGNITUDE:
            return Parsed.failure(f"value {value:g} out of support: |value| exceeds the usable magnitude "
                                  f"{MAX_USABLE_MAGNITUDE:g}")
        integer = self.answer_format in ("integer", "option") or self.support in ("discrete", "categorical")
        return parsing.check_support(value, integer=integer, low=self.low, high=self.high)

    # ---------------------------------------------------------------- records

    def to_record(self, with_prompt: bool = True) -> dict:
        """A JSON-serialisable description (what `ub bank list --json` prints)."""
        rec = {
            "id": self.id,
            "uid": self.uid,
            "bank": self.bank,
            "category": self.category,
            "task_type": self.task_type,
            "subcategory": self.subcategory,
            "family": self.family,
            "regime": self.regime,
            "modality": self.modality,
            "support": self.support,
            "answer_format": self.answer_format,
            "params": _jsonable(self.params),
            "options": list(self.options),
            "low": None if math.isinf(self.low) else self.low,
            "high": None if math.isinf(self.high) else self.high,
        }
        if with_prompt:
            rec["prompt"] = self.full_prompt
        if self.metadata:
            rec["metadata"] = _jsonable(self.metadata)
        return rec


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


@dataclass(frozen=True)
class Bank:
    """One registered problem bank.

    ``load(size)`` returns its items (``size`` is ``None``, ``"subset"`` or ``"full"``); ``version()`` returns its
    ``BANK_VERSION`` (a callable, so a bank's module is imported only when it is used); ``id_prefixes`` are the
    prefixes every id of the bank starts with (empty: any id may belong to it, and every lookup searches it);
    ``find(text)`` is the bank's prompt index: the item whose prompt ``text`` states, as the offline reference
    models receive it (a prompt, possibly followed by a continuation or an appended instruction), else ``None``.
    The offline models (``ub/oracle``, ``ub-oracle``) ask every bank through :func:`find_item`.
    """

    name: str
    load: Callable[[str | None], Sequence]
    version: Callable[[], str]
    id_prefixes: tuple[str, ...] = ()
    find: Callable[[str], Any] | None = None
