"""Run-to-run stability as epoch reducers (the non-determinism paper):
``--epochs N --epochs-reducer mean,ub_inspect/tar_a,ub_inspect/tar_r``.

The non-determinism paper repeats a "deterministic" evaluation N times and asks whether the outputs agree: TARa@N (the
parsed answers of all N runs are identical) and TARr@N (the raw completions are identical). With Inspect's epochs the
N runs are already there, so these reducers measure it on any task, unchanged:

- ``ub_inspect/tar_a``: the reduced value is 1.0 when every epoch's parsed answer (``Score.metadata["parsed_answer"]``,
  else ``Score.answer``, else ``Score.value``) is the same, else 0.0: the per-question indicator whose mean is
  TARa@N, so under this reducer the task's own metrics read as TARa@N (``accuracy`` under ``tar_a`` = TARa@N). The
  metadata also carries ``tar_a``, ``tar_r``, the answers and the number of epochs reduced.
- ``ub_inspect/tar_r``: the same for the raw completion (``Score.explanation``, which Inspect's ``match``/``choice``
  scorers set to the completion, or ``Score.metadata`` ``completion``/``outputs``/``outputs_digest``), i.e. TARr@N.
- ``ub_inspect/tar`` and ``ub_inspect/tar_raw``: aliases of ``tar_a`` and ``tar_r`` (command lines and logs that
  name them keep working).

``ub_inspect/stability`` reduces its epochs with ``tar_a`` (:mod:`ub_inspect.stability.scorer`).

For dict-valued scores every key carries the indicator, so the task's per-key metrics all read as the rate.
``ub_core.metrics.total_agreement_rate`` is the same measurement on plain lists of runs.
"""

from __future__ import annotations

from typing import Any, Mapping

from inspect_ai.scorer import Score, ScoreReducer, score_reducer

from ub_core.metrics.stability import release_answers_agree

from ._naming import registry_name

__all__ = ["tar_a", "tar_r", "tar", "tar_raw", "parsed_answer", "raw_completion"]


def parsed_answer(score: Score) -> Any:
    """``Score.metadata["parsed_answer"]`` when a scorer records it (there a parse failure is ``None`` and agrees
    only with another ``None``; falling back to ``value`` would let it agree with an answer equal to the value),
    else ``Score.answer``, else ``Score.value``."""
    meta = score.metadata or {}
    if "parsed_answer" in meta:
        return meta["parsed_answer"]
    return score.answer if score.answer is not None else score.value


def raw_completion(score: Score) -> Any:
    meta = score.metadata or {}
    for key in ("completion", "outputs", "outputs_digest", "raw"):
        if key in meta:
            return meta[key]
    return score.explanation


def _agree(items: list) -> float:
    return 1.0 if all(x == items[0] for x in items[1:]) else 0.0


def _indicator_score(scores: list[Score], indicator: float, metadata: dict) -> Score:
    if scores and isinstance(scores[0].value, Mapping):
        value: Any = {k: indicator for k in scores[0].value}
    else:
        value = indicator
    return Score(value=value, answer=str(parsed_answer(scores[0])) if scores else None, metadata=metadata)


def _answers_agree(scores: list[Score]) -> Score:
    answers = [parsed_answer(s) for s in scores]
    raws = [raw_completion(s) for s in scores]
    if scores and (scores[0].metadata or {}).get("convention") == "release":  # the release's TARa rule
        agree = 1.0 if release_answers_agree(answers) else 0.0
    else:
        agree = _agree(answers)
    return _indicator_score(scores, agree, {"tar_a": agree, "tar_r": _agree(raws),
                                                      "answers": [str(a) for a in answers], "epochs": len(scores)})


def _replies_agree(scores: list[Score]) -> Score:
    raws = [raw_completion(s) for s in scores]
    return _indicator_score(scores, _agree(raws), {"tar_r": _agree(raws)})


@score_reducer(name=registry_name("tar_a"))
def tar_a() -> ScoreReducer:
    """TARa@N per question: 1.0 when the parsed answers of all epochs agree (the non-determinism paper, sec. 3)."""
    return _answers_agree


@score_reducer(name=registry_name("tar_r"))
def tar_r() -> ScoreReducer:
    """TARr@N per question: 1.0 when the raw completions of all epochs are identical (the non-determinism paper,
    sec. 3)."""
    return _replies_agree


@score_reducer(name=registry_name("tar"))
def tar() -> ScoreReducer:
    """An alias of :func:`tar_a`."""
    return _answers_agree


@score_reducer(name=registry_name("tar_raw"))
def tar_raw() -> ScoreReducer:
    """An alias of :func:`tar_r`."""
    return _replies_agree
