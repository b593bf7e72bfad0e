"""lm-eval hook functions (``!function`` targets) for the ``ub_odds_*`` tasks ("What are the odds", the odds paper).
The science is ``ub_core.problems.odds`` and ``ub_core.metrics.odds``; the Inspect task scores with the same
:func:`~ub_core.metrics.odds_item_scores`, so both frameworks report the same keys and values.

- :func:`odds_dataset` is the ``custom_dataset``: called with the task's ``metadata`` (``task``, ``shots``,
  ``shot_type``, ``context``, ``families``, ``edition``, ``list_size``, ``convention``; ``--metadata`` on the command
  line overrides them), the YAML's ``dataset_kwargs`` (``yaml_task``: the task the YAML asks; ``replies``: its
  ``repeats``, which ``--metadata`` cannot change) and the model_args keys, it returns the matching items as a
  ``DatasetDict``. Metadata that contradicts the YAML (another ``task``, a ``list_size`` whose values per problem are
  not :data:`N_VALUES`) or is out of range is refused with a one-line ValueError naming the option.
- :func:`process_results_odds` parses a document's generation(s) and returns ``abs_error``,
  ``baseline_abs_error``, ``parse_failed`` (percentile, probability) or ``ks_stat``, ``ks@N``, ``n_valid``,
  ``n_failed`` (sampling: all the generations that the ``take_first_k`` filter keeps).
- :func:`nanmean`: the MAE over the documents where the error is defined (a parse failure, or the baseline of a
  0-shot item, is NaN).
- :func:`distribution_se`: the odds paper's ± (Tables 1 and 2), the standard error across distributions of their
  mean error (``abs_error_dist_se``) or KS statistic (``ks_stat_dist_se``), from each document's
  ``[distribution, value]``.
"""

from __future__ import annotations

from typing import Any

from ub_core.metric_spec import per_n_key
from ub_core.metrics import ODDS_KS_NS, across_distributions, odds_item_scores

from .ksn_hooks import nanmean  # noqa: F401  (the one defined-values mean; the odds YAMLs name utils.nanmean)
from .metadata import ODDS_OPTIONS, checked
from ub_core.problems.base import requested_list_size
from ub_core.problems.odds import CONVENTIONS, SHOT_COUNTS, TASKS, odds_item, odds_items

__all__ = ["odds_docs", "odds_dataset", "check_options", "process_results_odds", "nanmean", "distribution_se",
           "QUESTION_KEYS", "SAMPLING_KEYS"]

QUESTION_KEYS = ("abs_error", "baseline_abs_error", "parse_failed")
#: Values per sampling problem (the odds paper, task 2: 1,000 draws).
N_VALUES = 1000
SAMPLING_KEYS = ("ks_stat",) + tuple(per_n_key("ks", n) for n in ODDS_KS_NS) + ("n_valid", "n_failed")


def _names(value: Any) -> list[str] | None:
    if value is None or value == "" or value == "all":
        return None
    if isinstance(value, str):
        return [x.strip() for x in value.split(",") if x.strip()]
    return [str(x) for x in value]


def _shots(value: Any) -> list[int] | None:
    if value is None or value == "" or value == "all":
        return None
    if isinstance(value, (int, float)):
        return [int(value)]
    items = value if isinstance(value, (list, tuple)) else str(value).strip("[]").split(",")
    out = [int(str(x).strip()) for x in items if str(x).strip()]
    bad = [k for k in out if k not in SHOT_COUNTS]
    if bad:
        raise ValueError(f"ub_odds: shots must be among {SHOT_COUNTS}, got {bad[0]}")
    return out


def _positive_int(value: Any, name: str) -> int:
    try:
        k = int(str(value).strip())
    except ValueError:
        k = None
    if k is None or k < 1 or str(value).strip() not in (str(k), f"{k}.0"):
        raise ValueError(f"ub_odds: metadata {name} must be a positive integer, got {value!r}")
    return k


def check_options(task: Any, list_size: Any = 1, yaml_task: Any = None, replies: Any = None,
                  convention: Any = "paper") -> tuple[str, int, str]:
    """Validate the options that lm-eval's ``--metadata`` can set against the YAML's fixed ``dataset_kwargs``;
    return ``(task, list_size, convention)`` or raise a one-line ValueError naming the option and what is allowed.

    - ``task`` must be one of ``percentile``, ``probability``, ``sampling`` and, when the YAML names its task
      (``yaml_task``), that one: ``ub_odds_percentile`` with ``{"task": "sampling"}`` would send sampling items
      one reply each.
    - ``list_size`` must be a positive integer, 1 for percentile and probability items, and for sampling exactly
      ``N_VALUES / replies`` (the YAML's ``repeats`` fixes the replies per problem: 50 in ``ub_odds_sampling``, so 20
      values each; 1,000 in ``ub_odds_sampling_single``, so 1). Any other value would silently collect fewer (or
      more) than 1,000 values and make KS@N meaningless.
    - ``convention`` must be ``paper`` or ``release``.
    """
    task = str(task)
    if task not in TASKS:
        raise ValueError(f"ub_odds: metadata task must be one of {', '.join(TASKS)}, got {task!r}")
    if yaml_task is not None and task != str(yaml_task):
        raise ValueError(f"ub_odds: metadata task={task!r} contradicts this task, which asks {yaml_task} items; "
                         f"run ub_odds_{task} instead")
    k = _positive_int(list_size, "list_size")
    if task != "sampling" and k != 1:
        raise ValueError(f"ub_odds: metadata list_size applies to sampling only; {task} items take list_size=1, "
                         f"got {k}")
    if task == "sampling" and replies is not None:
        r = _positive_int(replies, "replies")
        if k * r != N_VALUES:
            need = N_VALUES // r if N_VALUES % r == 0 else None
            hint = (f"list_size must be {need} here" if need else "no list_size fits")
            raise ValueError(f"ub_odds: metadata list_size={k} gives {r} replies x {k} = {k * r} values per problem, "
                             f"not {N_VALUES}; {hint} (ub_odds_sampling: 20; ub_odds_sampling_single: 1)")
    convention = str(convention)
    if convention not in CONVENTIONS:
        raise ValueError(f"ub_odds: metadata convention must be one of {', '.join(CONVENTIONS)}, got {convention!r}")
    return task, k, convention


def odds_docs(task: str = "percentile", shots: Any = None, shot_type: Any = None, context: Any = "none",
              families: Any = None, edition: str = "subset", list_size: int = 1, convention: str = "paper",
              yaml_task: Any = None, replies: Any = None) -> list[dict]:
    """One document per item: id, prompt (list prompting for sampling when ``list_size`` > 1) and grouping keys.
    The options are checked first (:func:`check_options`)."""
    task, k, convention = check_options(task, list_size, yaml_task, replies, convention)
    stype = None if shot_type in (None, "", "all", "both") else str(shot_type)
    items = odds_items(str(edition), task=task, shots=_shots(shots), shot_type=stype,
                       contexts=_names(context), families=_names(families), convention=convention)
    if not items:
        raise ValueError(f"ub_odds: no items for task={task} shots={shots} shot_type={shot_type} context={context}")
    docs = []
    for p in items:
        m = p.metadata
        prompt = p.list_prompt(k) if (m["task"] == "sampling" and k > 1) else p.full_prompt
        docs.append({"id": p.id, "prompt": prompt, "family": p.family, "task": m["task"], "shots": m["shots"],
                     "shot_type": m["shot_type"], "context": m["context"],
                     "parameterisation": m["parameterisation"], "distribution": m["distribution"]})
    return docs


def odds_dataset(task: str = "percentile", shots: Any = None, shot_type: Any = None, context: Any = "none",
                 families: Any = None, edition: str = "subset", list_size: int = 1, convention: str = "paper",
                 yaml_task: Any = None, replies: Any = None, **kwargs: Any):
    """``custom_dataset`` hook (metadata, the YAML's dataset_kwargs and model_args arrive as keyword arguments; a ub
    option these tasks do not take is a one-line error: :mod:`ub_lmeval.metadata`)."""
    from datasets import Dataset, DatasetDict

    checked("ub_odds", kwargs, ODDS_OPTIONS)

    return DatasetDict({"test": Dataset.from_list(odds_docs(task, shots, shot_type, context, families, edition,
                                                            list_size, convention, yaml_task, replies))})


def process_results_odds(doc: dict, results: list) -> dict:
    """One document's generation(s) -> its odds scores (the same dict as the Inspect scorer's value)."""
    item = odds_item(doc["id"])
    if item.metadata["task"] == "sampling":
        generations = results[0] if results and isinstance(results[0], (list, tuple)) else results
        row = odds_item_scores(item, [str(g) for g in generations], list_size=requested_list_size(doc["prompt"]))
        return {**{key: row[key] for key in SAMPLING_KEYS},
                "ks_stat_dist_se": [item.metadata["distribution"], row["ks_stat"]]}
    text = results[0] if results else ""
    if isinstance(text, (list, tuple)):
        text = text[0] if text else ""
    row = odds_item_scores(item, str(text))
    return {**{key: row[key] for key in QUESTION_KEYS},
            "abs_error_dist_se": [item.metadata["distribution"], row["abs_error"]]}


def distribution_se(items: Any) -> float:
    """Aggregation: the standard error across distributions (ddof 1) of their mean value
    (:func:`ub_core.metrics.across_distributions`), from each document's ``[distribution, value]``; NaN with
    fewer than two distributions. A per-document number (no distribution) counts as its own distribution."""
    by_dist: dict = {}
    for i, x in enumerate(items):
        if isinstance(x, (list, tuple)) and len(x) == 2:
            by_dist.setdefault(str(x[0]), []).append(x[1])
        else:
            by_dist.setdefault(("document", i), []).append(x)
    return float(across_distributions(by_dist)["se"])
