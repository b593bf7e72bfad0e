"""The offline models' reply laws for the tree route (:mod:`ub_core.logprob.reply_tree`).

``ub/oracle`` is one model: its tree replies are the law of its sampled replies. Where the support can be listed
they are the listed candidates with their exact probabilities (:func:`ub_core.problems.candidates.candidate_set`,
the texts :func:`ub_core.oracle.render_value` writes); elsewhere the empirical law of ``ORACLE_TREE_DRAWS`` fresh
true draws, each written as the sampled model writes it (:func:`ub_core.oracle.render_value`: full precision,
``repr(float)``, unless the model argument ``digits`` asks for N significant digits). ``ub/collapse``'s law is its
one reply.

A reply is split into tokens as a model's tokenizer would (:class:`ReplyWriter`): a run of up to
``number_token_digits`` digits (1: the Llama 2, Mistral and Qwen tokenizers; 3: the ``\\p{N}{1,3}`` pre-tokenizer
of Llama 3 and GPT-4, digit runs cut left to right), a word, a run of white space, or one other character. The
trees are then as deep and as wide as such a model's, and a word prefix is not a token boundary, as for a model.

Storage stays small: the sorted texts are one fixed-width UTF-8 byte array and the probabilities one cumulative
sum (about 3.4 MB for 100,000 full-precision numbers); token boundaries are found on demand from the texts that
extend the asked prefix (bisection, then one vectorised pass over their next bytes). The module keeps the laws
last used, at most :data:`MAX_CACHED_LAWS` and :data:`MAX_CACHE_BYTES` in all.
"""

from __future__ import annotations

import math
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..oracle import significant_text
from ..problems.base import Problem
from .reply_tree import TOP_K

__all__ = ["OracleReplyLaw", "ReplyWriter", "oracle_reply_law", "ORACLE_TREE_DRAWS", "ORACLE_TREE_DIGITS",
           "round_significant", "MAX_CACHED_LAWS", "MAX_CACHE_BYTES", "MAX_DIGITS", "MAX_NUMBER_TOKEN_DIGITS"]

#: Fresh true draws behind the oracle's reply law where the support cannot be listed.
ORACLE_TREE_DRAWS = 100_000
#: Significant digits of the oracle's continuous answers by default: ``None``, full precision (``repr(float)``),
#: as its sampled replies.
ORACLE_TREE_DIGITS: int | None = None
#: The most significant digits ``-M digits`` takes (a double holds 17).
MAX_DIGITS = 17
#: The most digits per token ``-M number_token_digits`` takes (a position then has up to 10**K children).
MAX_NUMBER_TOKEN_DIGITS = 4
#: The reply laws kept in memory, by count and by total size (a 448-problem run builds one per problem; 128 MiB
#: holds about 42 full-precision laws, more than the 32 samples Inspect runs at once on ub/oracle by default).
MAX_CACHED_LAWS = 64
MAX_CACHE_BYTES = 128 * 2**20


@lru_cache(maxsize=None)
def _token_pattern(number_token_digits: int) -> re.Pattern:
    return re.compile(rf"\d{{1,{int(number_token_digits)}}}|[^\W\d_]+|\s+|.", re.DOTALL)


@lru_cache(maxsize=65536)
def _continues(number_token_digits: int, token: str, char: str) -> bool:
    """Whether ``char`` right after ``token`` belongs to that token (so the text has no token boundary there)."""
    return _token_pattern(number_token_digits).match(token + char).end() > len(token)


_GROWING = re.compile(r"[^\W\d_]|\s")


def _may_grow(number_token_digits: int, token: str) -> bool:
    """Whether more characters could belong to ``token``: a word, white space, or fewer digits than a token holds
    (one other character is a whole token)."""
    if token[0].isdecimal():
        return len(token) < number_token_digits
    return _GROWING.match(token[0]) is not None


#: How a writer cuts digit runs into tokens (:class:`ReplyWriter`).
SPLITS = ("canonical", "random")
#: How a writer writes a continuous answer (:class:`ReplyWriter`): ``plain`` (``repr`` or N significant digits),
#: ``scientific`` (every value with a mantissa and an exponent, ``{4.5240E-01}``), ``separators`` (thousands
#: separators, ``{1,234.5}``), ``fraction`` (``{453/1000}``), ``no_leading_zero`` (``{.4524}``). Each is a form
#: the KS@N reader accepts; the reply tree's number grammar covers only the plain one.
STYLES = ("plain", "scientific", "separators", "fraction", "no_leading_zero")


@dataclass(frozen=True)
class ReplyWriter:
    """How an offline model writes and tokenises a reply: numbers in full precision (``digits=None``, as
    :func:`ub_core.oracle.render_value`) or with ``digits`` significant digits; digit runs split into tokens of up
    to ``number_token_digits`` digits, left to right (``split="canonical"``), or at random (``split="random"``,
    the differential audit's writer of non-canonical tokenisations): at every position of a digit run
    the next token is 1 to m digits long, each length with probability 1 / m, m = min(number_token_digits, the
    digits left in the run). That law depends only on the text written so far, so it is one law whatever token
    path wrote the text, and the tree meets the same text by many paths. Its reply law is not the canonical
    writer's (whether a boundary falls after ``{12`` depends on what follows), so it is audited against its own
    replies drawn token by token (:func:`ub_core.logprob.audit.sample_replies`)."""

    digits: int | None = ORACLE_TREE_DIGITS
    number_token_digits: int = 1
    split: str = "canonical"
    style: str = "plain"
    #: every continuous value is written times this factor (a writer whose law differs from the truth by a known
    #: amount)
    scale: float = 1.0
    #: this share of the writer's draws is replaced by the draws' median: a law whose KS distance to the truth is
    #: about half of it (0.4: about 0.2, near KS@100's critical value, so an intermediate pass rate: the audit's
    #: writers with power)
    collapse: float = 0.0

    def __post_init__(self) -> None:
        if self.digits is not None and (isinstance(self.digits, bool) or not isinstance(self.digits, int)
                                        or not 1 <= self.digits <= MAX_DIGITS):
            raise ValueError(f"digits must be an integer from 1 to {MAX_DIGITS}, got {self.digits!r}")
        k = self.number_token_digits
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_NUMBER_TOKEN_DIGITS:
            raise ValueError(f"number_token_digits must be an integer from 1 to {MAX_NUMBER_TOKEN_DIGITS}, got {k!r}")
        if self.split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)}, got {self.style!r}")

    def write(self, problem: Problem, value) -> str:
        from ..oracle import render_value

        if self.scale != 1.0 and problem.answer_format == "number":
            value = float(value) * self.scale
        plain = render_value(problem, value, self.digits)
        if self.style == "plain" or problem.answer_format != "number":
            return plain
        v = float(value)
        if self.style == "scientific":
            return "{" + f"{v:.{(self.digits or 5) - 1}E}" + "}"
        if self.style == "separators":
            return "{" + format(v, ",") + "}" if self.digits is None else plain
        if self.style == "fraction":
            from fractions import Fraction

            f = Fraction(v).limit_denominator(10_000)
            return "{" + (f"{f.numerator}/{f.denominator}" if f.denominator != 1 else str(f.numerator)) + "}"
        return re.sub(r"^\{(-?)0\.", r"{\1.", plain)  # no_leading_zero

    def tokens(self, text: str) -> list[str]:
        """``text`` split into this writer's tokens."""
        return [m.group() for m in _token_pattern(self.number_token_digits).finditer(text)]


class OracleReplyLaw:
    """An offline model's reply law for the tree route (module docstring): replies with their probabilities, split
    into tokens by ``writer`` (:class:`ReplyWriter`), ``eos`` (:data:`OFFLINE_EOS <ub_core.logprob.eos.OFFLINE_EOS>`)
    ending a reply.

    The texts are sorted and stored as one fixed-width UTF-8 byte array (UTF-8 keeps the order of code points), so
    the replies that extend a prefix are one slice (bisection); :meth:`next_tokens` groups those with a token
    boundary at the prefix by their next token."""

    def __init__(self, law: dict[str, float], problem_id: str = "", exact: bool = True,
                 writer: ReplyWriter | None = None) -> None:
        self.problem_id, self.exact = problem_id, exact
        self.writer = writer or ReplyWriter()
        texts = sorted(t for t, p in law.items() if p > 0)
        encoded = [t.encode("utf-8") for t in texts]
        self.width = max((len(t) for t in encoded), default=1) or 1
        self._texts = np.array(encoded, dtype=f"S{self.width}")
        probs = np.array([law[t] for t in texts], dtype=float)
        self._cum = np.concatenate([[0.0], np.cumsum(probs / probs.sum())]) if len(probs) else np.zeros(1)
        self._rows = self._texts.view(np.uint8).reshape(len(texts), self.width)

    @classmethod
    def for_problem(cls, problem: Problem, mode: str = "oracle", draws: int = ORACLE_TREE_DRAWS,
                    writer: ReplyWriter | None = None, seed: int = 0) -> "OracleReplyLaw":
        """The reply law of ``ub/oracle`` (``mode="oracle"``: the listed candidates with their exact
        probabilities, else the empirical law of ``draws`` true draws written by ``writer``) or of ``ub/collapse``
        (its one reply)."""
        from ..oracle import collapse_value, oracle_values
        from ..problems.candidates import candidate_set

        writer = writer or ReplyWriter()
        if mode == "collapse":
            return cls({writer.write(problem, collapse_value(problem)): 1.0}, problem.id, writer=writer)
        if mode != "oracle":
            raise ValueError(f"unknown mode {mode!r}; expected oracle or collapse")
        cs = candidate_set(problem)
        if cs is None or writer.collapse > 0:
            values = list(oracle_values(problem, draws, seed=seed))
            if writer.collapse > 0 and problem.answer_format in ("number", "integer"):
                median = float(np.median(np.asarray(values, dtype=float)))
                values[:int(round(writer.collapse * draws))] = [median] * int(round(writer.collapse * draws))
            counts = Counter(writer.write(problem, v) for v in values)
            return cls({t: c / draws for t, c in counts.items()}, problem.id, exact=False, writer=writer)
        law: dict[str, float] = {}
        for t, p in zip(cs.texts, cs.p):
            law[t] = law.get(t, 0.0) + float(p)
        return cls(law, problem.id, writer=writer)

    def __len__(self) -> int:
        return len(self._texts)

    @property
    def nbytes(self) -> int:
        """The memory the law holds (texts and cumulative probabilities)."""
        return int(self._texts.nbytes + self._cum.nbytes)

    @property
    def texts(self) -> list[str]:
        """The replies, sorted (decoded afresh: for checks, not for the hot path)."""
        return [t.decode("utf-8") for t in self._texts.tolist()]

    @property
    def probs(self) -> np.ndarray:
        return np.diff(self._cum)

    def sample(self, k: int, rng: np.random.Generator) -> list[str]:
        """``k`` replies drawn from the law (texts by their probabilities): what the model's sampled run writes,
        e.g. the reply tree's grammar probe. For a ``random`` split the text law depends on the token path: draw
        token by token instead (:func:`ub_core.logprob.audit.sample_replies`)."""
        idx = np.searchsorted(self._cum[1:], rng.random(int(k)) * self._cum[-1], side="right")
        idx = np.minimum(idx, len(self._texts) - 1)
        return [self._texts[i].decode("utf-8") for i in idx.tolist()]

    def sampler(self, seed: int = 0):
        """A plain ``k -> replies`` function drawing with its own seeded generator (:meth:`sample`)."""
        rng = np.random.default_rng(seed)
        return lambda k: self.sample(k, rng)

    def _range(self, prefix: bytes) -> tuple[int, int]:
        if len(prefix) > self.width:
            return 0, 0
        lo = int(np.searchsorted(self._texts, prefix, "left"))
        if len(prefix) == self.width:
            return lo, int(np.searchsorted(self._texts, prefix, "right"))
        return lo, int(np.searchsorted(self._texts, prefix + b"\xff", "left"))  # 0xff occurs in no UTF-8 text

    def next_tokens(self, prefix: str, top_k: int = TOP_K, eos: str | None = None) -> list[tuple[str, float]]:
        """The top-``top_k`` next tokens after ``prefix`` with their conditional log-probabilities; the end of the
        reply is ``eos`` (default :data:`ub_core.logprob.eos.OFFLINE_EOS`). Empty for a prefix the model never
        writes, or one that is not a token boundary of any of its replies."""
        from .eos import OFFLINE_EOS

        eos = OFFLINE_EOS if eos is None else eos
        mass = self._next_token_mass(prefix)
        total = math.fsum(mass.values())
        if total <= 0:
            return []
        out = sorted(((eos if t is None else t, math.log(m / total)) for t, m in mass.items() if m > 0),
                     key=lambda kv: (-kv[1], kv[0]))
        return out[:max(1, int(top_k))]

    def _next_token_mass(self, prefix: str) -> dict[str | None, float]:
        """The mass of each next token (``None``: the reply ends) over the replies with a token boundary after
        ``prefix``. The replies extending ``prefix`` are grouped by their next ``w`` bytes (one vectorised pass,
        the slice being sorted); a group whose token is not settled within those bytes (a long word, a character
        cut by the window) is grouped again with twice the window."""
        k_digits = self.writer.number_token_digits
        random_split = self.writer.split == "random"
        pattern = _token_pattern(k_digits)
        pb = prefix.encode("utf-8")
        kb = len(pb)
        lo, hi = self._range(pb)
        if lo >= hi:
            return {}
        last = None
        if prefix:
            *_, m = pattern.finditer(prefix)
            last = m.group()
        cum, rows, width = self._cum, self._rows, self.width
        mass: dict[str | None, float] = {}
        stack = [(lo, hi, k_digits)]
        while stack:
            a, b, w = stack.pop()
            end = min(kb + w, width)
            if kb >= width:  # every text here is the prefix itself
                mass[None] = mass.get(None, 0.0) + float(cum[b] - cum[a])
                continue
            window = rows[a:b, kb:end]
            cuts = np.flatnonzero((window[1:] != window[:-1]).any(axis=1)) + 1 if b - a > 1 else np.empty(0, int)
            starts = [0, *cuts.tolist()]
            stops = [*cuts.tolist(), b - a]
            for s, e in zip(starts, stops):
                raw = window[s].tobytes()
                stripped = raw.rstrip(b"\x00")
                group = float(cum[a + e] - cum[a + s])
                if not stripped:
                    mass[None] = mass.get(None, 0.0) + group
                    continue
                ended = len(stripped) < len(raw) or end == width  # the texts end within the window
                try:
                    text = stripped.decode("utf-8")
                except UnicodeDecodeError:  # a character cut by the window's end
                    text = stripped.decode("utf-8", "ignore")
                    ended = False
                if not text:
                    stack.append((a + s, a + e, 2 * w))
                    continue
                inside_run = random_split and last is not None and last[-1].isdecimal() and text[0].isdecimal()
                if last is not None and not inside_run and _continues(k_digits, last, text[0]):
                    continue  # the prefix ends inside a token of these texts: no boundary here
                tok = pattern.match(text).group()
                if len(tok) < len(text) or ended or not _may_grow(k_digits, tok):
                    if random_split and tok[0].isdecimal():  # 1 to m digits, m = len(tok), each 1 / m
                        for j in range(1, len(tok) + 1):
                            mass[tok[:j]] = mass.get(tok[:j], 0.0) + group / len(tok)
                    else:
                        mass[tok] = mass.get(tok, 0.0) + group
                else:
                    stack.append((a + s, a + e, 2 * w))
        return mass


def round_significant(values: np.ndarray, digits: int) -> list[str]:
    """Each value written with ``digits`` significant digits in braces (:func:`ub_core.oracle.significant_text`:
    ``{1500}``, ``{0.0042}``, ``{-3.1}``): the writer of ``-M digits=N``."""
    return ["{" + significant_text(v, digits) + "}" for v in np.asarray(values, dtype=float)]


_LAWS: "OrderedDict[tuple, OracleReplyLaw]" = OrderedDict()


def oracle_reply_law(problem: Problem, mode: str = "oracle", draws: int = ORACLE_TREE_DRAWS,
                     digits: int | None = ORACLE_TREE_DIGITS, number_token_digits: int = 1,
                     split: str = "canonical", style: str = "plain", scale: float = 1.0,
                     collapse: float = 0.0) -> OracleReplyLaw:
    """The reply law of ``ub/oracle`` or ``ub/collapse`` for ``problem`` (:meth:`OracleReplyLaw.for_problem`)
    with the writer ``ReplyWriter(digits, number_token_digits, split)``, built once and kept while it is among the last
    used (at most :data:`MAX_CACHED_LAWS` laws and :data:`MAX_CACHE_BYTES` in all)."""
    writer = ReplyWriter(digits, number_token_digits, split, style, float(scale), float(collapse))
    key = (problem.id, problem.family, repr(problem.params), mode, draws, writer)
    law = _LAWS.get(key)
    if law is not None:
        _LAWS.move_to_end(key)
        return law
    law = OracleReplyLaw.for_problem(problem, mode, draws, writer)
    _LAWS[key] = law
    while len(_LAWS) > 1 and (len(_LAWS) > MAX_CACHED_LAWS
                              or sum(v.nbytes for v in _LAWS.values()) > MAX_CACHE_BYTES):
        _LAWS.popitem(last=False)
    return law
