"""Column specs for ``inspect_ai.analysis.samples_df``: each eval family's per-sample score dict as typed columns.

Inspect's default ``score_*`` column holds a dict-valued Score as one JSON string, which a dashboard cannot filter.
:func:`columns` gives one float column per score key, named ``<eval_family>_<key>`` (``ksn_ks@100``, ``ksn_wdz``,
``calibration_pm``, ``odds_question_abs_error``, ...), read from the sample summaries (no full sample load)::

    from inspect_ai.analysis import SampleSummary, samples_df
    from ub_inspect.analysis import columns
    df = samples_df("logs", columns=SampleSummary + columns("ksn"))
    failed = df[df["ksn_ks@100"] == 0.0]                       # the problems KS@100 rejects
    per_category(df, "ksn")                  # every per-category key, by model, task (run) and category

``samples_df`` needs pandas and pyarrow (Inspect's requirement: ``pip install pandas pyarrow``). Eval families
(``ub_core.metric_spec``): ``ksn``, ``ksn_logprob``, ``calibration``, ``implicit``, ``explicit``,
``odds_question``, ``odds_sampling`` and ``stability`` (``stability_correct``, ``stability_parsed_answer``). A key
a sample does not carry (another eval family's log, an errored sample, an N the run did not use) reads as NaN.
"""

from __future__ import annotations

from typing import Any, Sequence

from inspect_ai.analysis import SampleColumn

from ub_core.metric_spec import find_metric, metric_keys, metric_specs, split_key
from ub_core.metrics import DEFAULT_NS

__all__ = ["SCORERS", "columns", "ksn_columns", "stability_columns", "per_category", "run_columns"]

#: the scorer (``EvalSample.scores`` key) each eval family's tasks write
SCORERS = {"ksn": "ksn_scorer", "ksn_logprob": "ksn_logprob_scorer", "calibration": "calibration_scorer",
           "implicit": "implicit_scorer", "explicit": "explicit_scorer", "odds_question": "odds_question_scorer",
           "odds_sampling": "odds_sampling_scorer", "stability": "stability_scorer"}


def _score(sample: Any, scorer: str) -> Any:
    return (getattr(sample, "scores", None) or {}).get(scorer)


def _float_of(scorer: str, key: str):
    def read(sample: Any) -> float:
        score = _score(sample, scorer)
        value = score.value.get(key) if score is not None and isinstance(score.value, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return float("nan")  # missing: a float column still (an all-missing column stays numeric)
        return float(value)

    return read


def _keys(eval_family: str, ns: Sequence[int]) -> list[str]:
    """The eval family's per-sample score keys, its per-N keys at ``ns`` (``ks@N`` and its p-value ``p@N`` for
    ksn), in spec order (:func:`ub_core.metric_spec.run_specs`)."""
    return list(metric_keys(eval_family, ns=ns))


def columns(eval_family: str, ns: Sequence[int] | None = None) -> list[SampleColumn]:
    """One float column ``<eval_family>_<key>`` per score key of ``eval_family`` (module docstring); ``ns``: the N
    of the per-N keys (``ks@N``, ``p@N``, ``p_pass@N``; default the eval family's)."""
    if eval_family == "stability":
        return stability_columns()
    scorer = SCORERS[eval_family]  # a one-line KeyError for an unknown eval family
    if ns is None:
        ns = [n for k in metric_keys(eval_family) if (n := split_key(k)[1]) is not None]
    return [SampleColumn(f"{eval_family}_{key}", path=_float_of(scorer, key), type=float, full=False)
            for key in _keys(eval_family, list(dict.fromkeys(ns)))]


def ksn_columns(ns: Sequence[int] = DEFAULT_NS) -> list[SampleColumn]:
    """:func:`columns` of ``ksn``: ``ksn_ks@N`` (1.0 pass / 0.0 fail), ``ksn_p@N``, ``ksn_wdz``, ``ksn_jsd``, ..."""
    return columns("ksn", ns)


def stability_columns() -> list[SampleColumn]:
    """Per sample and epoch: ``stability_correct`` (1.0 / 0.0), ``stability_parsed_answer`` (the letter read, None
    when unreadable) and ``stability_unreadable_reason``."""
    scorer = SCORERS["stability"]

    def correct(sample: Any) -> float | None:
        score = _score(sample, scorer)
        return None if score is None else {"C": 1.0, "I": 0.0}.get(str(score.value))

    def meta(key: str):
        def read(sample: Any) -> Any:
            score = _score(sample, scorer)
            return None if score is None else (score.metadata or {}).get(key)

        return read

    return [SampleColumn("stability_correct", path=correct, type=float, full=False),
            SampleColumn("stability_parsed_answer", path=meta("parsed_answer"), type=str, full=False),
            SampleColumn("stability_unreadable_reason", path=meta("unreadable_reason"), type=str, full=False)]


def run_columns(df: Any) -> Any:
    """``df`` with ``model`` and ``task_name`` columns (read from each log's header where ``df`` lacks them, as a
    ``samples_df(..., columns=SampleSummary + ...)`` does), so that rows of different runs can be kept apart."""
    if {"model", "task_name"} <= set(df.columns):
        return df
    from inspect_ai.log import read_eval_log

    headers = {log: read_eval_log(log, header_only=True).eval for log in df["log"].unique()}
    out = df.copy()
    out["model"] = out["log"].map(lambda log: headers[log].model)
    out["task_name"] = out["log"].map(lambda log: headers[log].task)
    return out


def per_category(df: Any, eval_family: str) -> Any:
    """The mean of each of ``eval_family``'s per-category keys (``MetricSpec.per_category``) over the rows of
    ``df`` (a ``samples_df`` with :func:`columns` and the sample metadata), NaN values left out, grouped by what
    was run, then by the spec's group: index ``(model, task_name, [eval_id,] <group>)``, the group being
    ``metadata_category`` (``metadata_family`` for the odds tasks). ``eval_id`` (the run) is in the index only where
    one model and task have several runs in ``df``: runs are never averaged together, nor are models (a folder with
    two models gives two sets of rows). For ``stability`` the per-sample value is ``stability_correct``: its mean is
    the accuracy over every run (epoch) of the category's questions. Inspect's own results carry the per-category
    values of the headline only (``ub_inspect.metrics``)."""
    df = run_columns(df)
    keys = ["model", "task_name"]
    if (df.groupby(keys)["eval_id"].nunique() > 1).any():
        keys.append("eval_id")
    if eval_family == "stability":
        return df.groupby([*keys, "metadata_category"])[["stability_correct"]].mean()
    specs = [m for m in metric_specs(eval_family) if m.per_category]
    group = f"metadata_{specs[0].group}" if specs else "metadata_category"
    prefix = f"{eval_family}_"
    cols = [c for c in df.columns if c.startswith(prefix)
            and (spec := find_metric(eval_family, c[len(prefix):])) is not None and spec.per_category]
    return df.groupby([*keys, group])[cols].mean()
