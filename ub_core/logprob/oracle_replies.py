"""The offline models' reply laws for the tree route (:mod:`ub_core.logprob.reply_tree`).

The offline oracle knows the truth, so it answers any prefix: its replies are the listed candidates where the
support can be listed (exact probabilities), else the rendered values of ``ORACLE_TREE_DRAWS`` fresh true draws,
numbers written with ``ORACLE_TREE_DIGITS`` significant digits (:func:`round_significant`), split into tokens as a
model's tokenizer would (digits, words, spaces).
"""

from __future__ import annotations

import bisect
import math
import re

import numpy as np

from ..problems.base import Problem
from .reply_tree import TOP_K

__all__ = ["OracleReplyLaw", "oracle_reply_law", "ORACLE_TREE_DRAWS", "ORACLE_TREE_DIGITS", "round_significant"]

#: Fresh true draws behind the oracle's reply law where the support cannot be listed.
ORACLE_TREE_DRAWS = 100_000
#: The oracle writes continuous answers with this many significant digits (:func:`round_significant`).
ORACLE_TREE_DIGITS = 2

#: How the oracle splits a reply into tokens: one digit (as the tokenizers of Llama 2, Mistral and Qwen do), a
#: word, a run of white space, or one other character. Its trees are then as deep as such a model's, and a word
#: prefix is not a token boundary, as for a model. (A tokenizer with three-digit tokens branches 1,000 ways after
#: a digit, more than a server's top-20 list shows: there the unlisted tokens stay missing mass.)
_ORACLE_TOKEN = re.compile(r"\d|[^\W\d_]+|\s+|.", re.DOTALL)


class OracleReplyLaw:
    """The offline oracle's reply law for the tree route (module docstring): replies with their probabilities,
    each split into tokens by :data:`_ORACLE_TOKEN`, :data:`OFFLINE_EOS <ub_core.logprob.ksn_logprob.OFFLINE_EOS>` ending
    a reply.

    ``texts`` are sorted, so the replies that extend a prefix are one slice (bisection); :meth:`next_tokens`
    groups those with a token boundary at the prefix by their next token."""

    def __init__(self, law: dict[str, float], problem_id: str = "", exact: bool = True) -> None:
        self.problem_id, self.exact = problem_id, exact
        self.texts = sorted(t for t, p in law.items() if p > 0)
        probs = np.array([law[t] for t in self.texts], dtype=float)
        self.probs = probs / probs.sum()
        self.boundaries = [_boundaries(t) for t in self.texts]

    @classmethod
    def for_problem(cls, problem: Problem, mode: str = "oracle", draws: int = ORACLE_TREE_DRAWS,
                    digits: int = ORACLE_TREE_DIGITS, seed: int = 0) -> "OracleReplyLaw":
        """The reply law of ``ub/oracle`` (``mode="oracle"``: the listed candidates with their exact
        probabilities, else the empirical law of ``draws`` rendered true draws) or of ``ub/collapse`` (its one
        reply)."""
        from ..oracle import collapse_value, render_value
        from ..problems.candidates import candidate_set

        if mode == "collapse":
            return cls({render_value(problem, collapse_value(problem)): 1.0}, problem.id)
        if mode != "oracle":
            raise ValueError(f"unknown mode {mode!r}; expected oracle or collapse")
        cs = candidate_set(problem)
        if cs is None:
            return cls(_empirical_law(problem, draws, digits, seed), problem.id, exact=False)
        law: dict[str, float] = {}
        for t, p in zip(cs.texts, cs.p):
            law[t] = law.get(t, 0.0) + float(p)
        return cls(law, problem.id)

    def __len__(self) -> int:
        return len(self.texts)

    def _range(self, prefix: str) -> tuple[int, int]:
        lo = bisect.bisect_left(self.texts, prefix)
        hi = bisect.bisect_left(self.texts, prefix + "\U0010ffff", lo)
        return lo, hi

    def next_tokens(self, prefix: str, top_k: int = TOP_K, eos: str | None = None) -> list[tuple[str, float]]:
        """The top-``top_k`` next tokens after ``prefix`` with their conditional log-probabilities; the end of the
        reply is ``eos`` (default :data:`ub_core.logprob.ksn_logprob.OFFLINE_EOS`). Empty for a prefix the oracle never
        writes, or one that is not a token boundary of any of its replies."""
        from .eos import OFFLINE_EOS

        eos = OFFLINE_EOS if eos is None else eos
        lo, hi = self._range(prefix)
        k = len(prefix)
        mass: dict[str, float] = {}
        for i in range(lo, hi):
            bounds = self.boundaries[i]
            j = bisect.bisect_left(bounds, k)
            if j == len(bounds) or bounds[j] != k:
                continue
            tok = eos if j + 1 == len(bounds) else self.texts[i][k:bounds[j + 1]]
            mass[tok] = mass.get(tok, 0.0) + float(self.probs[i])
        total = math.fsum(mass.values())
        if total <= 0:
            return []
        out = sorted(((t, math.log(m / total)) for t, m in mass.items() if m > 0), key=lambda kv: -kv[1])
        return out[:max(1, int(top_k))]


def _boundaries(text: str) -> list[int]:
    """The token boundaries of ``text`` under :data:`_ORACLE_TOKEN`: 0, each token's end."""
    return [0, *(m.end() for m in _ORACLE_TOKEN.finditer(text))]


def round_significant(values: np.ndarray, digits: int) -> list[str]:
    """Each value written with ``digits`` significant digits (at least the units: ``{1500}``, ``{0.0042}``,
    ``{-3.1}``): how the oracle writes a continuous answer in the tree route."""
    out = []
    for v in np.asarray(values, dtype=float):
        if v == 0 or not math.isfinite(v):
            out.append("{0}" if v == 0 else "{" + repr(float(v)) + "}")
            continue
        exp10 = math.floor(math.log10(abs(v))) + 1 - int(digits)
        rounded = round(v / 10.0 ** exp10) * 10.0 ** exp10
        decimals = max(0, -exp10)
        text = f"{rounded:.{decimals}f}"
        out.append("{" + ("0" if float(text) == 0 else text) + "}")
    return out


def _empirical_law(problem: Problem, draws: int, digits: int, seed: int) -> dict[str, float]:
    from ..oracle import oracle_values, render_value

    values = oracle_values(problem, draws, seed=seed)
    if problem.answer_format == "number":
        texts = round_significant(np.asarray(values, dtype=float), digits)
    else:
        texts = [render_value(problem, v) for v in values]
    uniq, counts = np.unique(np.asarray(texts, dtype=object), return_counts=True)
    return {str(t): c / len(texts) for t, c in zip(uniq, counts)}


_LAWS: dict[tuple, OracleReplyLaw] = {}
_MAX_LAWS = 64


def oracle_reply_law(problem: Problem, mode: str = "oracle", draws: int = ORACLE_TREE_DRAWS,
                     digits: int = ORACLE_TREE_DIGITS) -> OracleReplyLaw:
    """The reply law of ``ub/oracle`` or ``ub/collapse`` for ``problem`` (:meth:`OracleReplyLaw.for_problem`),
    built once per problem (the last :data:`_MAX_LAWS` are kept)."""
    key = (problem.id, problem.family, repr(problem.params), mode, draws, digits)
    law = _LAWS.get(key)
    if law is None:
        if len(_LAWS) >= _MAX_LAWS:
            _LAWS.pop(next(iter(_LAWS)))
        law = _LAWS[key] = OracleReplyLaw.for_problem(problem, mode, draws, digits)
    return law
