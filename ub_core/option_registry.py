"""Every option of every ub task family, in one table: name, checker, default, which families take it, in which
framework, and the help text. The front doors read it:

- Inspect's ``-T`` options: each task function's parameters and defaults are this table's
  (``tests/generic/test_option_registry.py`` compares them), and its checks are the checkers named here;
- lm-eval's ``--metadata`` (``ub-lm-eval`` and plain ``lm_eval``): :func:`check_metadata` in each ub
  ``custom_dataset`` hook, and :func:`precheck_run` before the model is loaded (the hook in
  ``unpredictabench_lm_eval_hook`` and ``ub-lm-eval``): a bad value, a near miss of one of our names
  (``threshhold``) or an option these tasks cannot take is one line and a non-zero exit; a key no ub task of the
  run takes is named in one warning (lm-eval hands ``--metadata`` to every task of a run: it may be another's);
- ``ub``'s flags print their defaults from here (``ub run --ns``).

An option lm-eval cannot express (the Ns of KS@N are fixed by a task YAML's ``metric_list``) carries the reason
(:attr:`Option.lmeval_reason`), which the refusal prints. A new option is one :data:`VOCABULARY` entry plus its
name in the families that take it (:data:`FAMILIES`, with the family's default).

A plug-in's option (entry-point group ``unpredictabench.options``, :func:`plugin_options`) is an :class:`Option`
with ``bank=`` (the plug-in bank whose runs take it) and ``apply=`` (``(problems, value) -> problems``, e.g. the
prompts without our answer instruction): Inspect's ksn tasks take it in ``-T bank_options={name: value}``, lm-eval's
``ub_ksn`` tasks of that bank as a ``--metadata`` key; :func:`apply_bank_options` checks and applies it.
"""

from __future__ import annotations

import difflib
import textwrap
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from . import options as o
from .option_help import TASK_HELP, TASK_SUMMARY
from .metrics.calibration import check_equal_counts
from .logprob import reply_tree as tree
from .metrics.inputs import DEFAULT_NS, KS_METHODS

__all__ = ["Option", "Family", "VOCABULARY", "FAMILIES", "LMEVAL_FAMILIES", "UB_OPTION_NAMES", "MODEL_ARG_NAMES",
           "SET_BY_TASK_YAML",
           "family_options", "check_option", "check_metadata", "near_miss", "precheck_run", "lmeval_family_of",
           "default_of", "format_default", "task_docstring", "plugin_options", "apply_bank_options"]

Checker = Callable[[Any, str], Any]


def _optional(check: Checker) -> Checker:
    """``check``, with ``None`` (not given) passed through."""
    def checked(value: Any, name: str) -> Any:
        return None if value is None else check(value, name)
    return checked


def _text(value: Any, name: str) -> str:
    if isinstance(value, (dict, list, tuple, set)):
        raise o.OptionValueError(f"option {name}: expected a text, got {value!r}")
    return str(value)


def _nonblank(value: Any, name: str) -> str:
    text = _text(value, name)
    if not text.strip():
        raise o.OptionValueError(f"option {name}: expected a text, got {value!r}")
    return text


def _choice(*allowed: str) -> Checker:
    return lambda value, name: o.choice(value, name, allowed)


def _nonneg_int(value: Any, name: str) -> int:
    return o.integer(value, name, low=0)


def _nonneg_real(value: Any, name: str) -> float:
    return o.real(value, name, low=0)


def _mapping(value: Any, name: str) -> dict:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise o.OptionValueError(f"option {name}: expected a mapping of option names to values, got {value!r}")
    return dict(value)


def _unit_width(value: Any, name: str) -> float:
    return o.real(value, name, 0, 1, low_open=True)


def _share(value: Any, name: str) -> float:
    return o.real(value, name, 0, 1, high_open=True)


def _open_unit(value: Any, name: str) -> float:
    return o.real(value, name, 0, 1, low_open=True, high_open=True)


def _equal_counts(value: Any, name: str) -> str:
    try:
        return check_equal_counts(value)
    except ValueError as exc:
        raise o.OptionValueError(f"option {name}: {exc}") from None


@dataclass(frozen=True)
class Option:
    """One option: its checker (``None``: free text or a value only the task can judge, e.g. a path), its help
    text, its default (per family: :data:`FAMILIES`), and why lm-eval cannot take it where it cannot."""

    name: str
    check: Checker | None
    help: str
    default: Any = None
    lmeval_reason: str | None = None
    #: a plug-in's option: the bank whose runs take it
    bank: str | None = None
    #: a plug-in's option: ``(problems, checked value) -> problems``, how it changes the bank's problems
    apply: Callable[[Any, Any], Any] | None = None

    def checked(self, value: Any) -> Any:
        """``value`` checked and typed; the checker's one-line :class:`~ub_core.options.OptionValueError`."""
        return value if self.check is None or value is None else self.check(value, self.name)


_BY_YAML = "lm-eval fixes it in the task YAML"
_FIXED_NS = ("lm-eval reports the metrics its task YAML lists (ks@1 ... ks@100 at 100 repeats, as the paper), so "
             "a run cannot choose them; the Inspect task takes -T ks_ns=...")
_TASK_PICKS = "pick the tasks instead (--tasks ub_ksn_text_explicit,...)"
_GEN_KWARGS = "lm-eval takes it as --gen_kwargs"

#: Every option name, once: checker, help, and (where lm-eval cannot take it) why.
VOCABULARY: dict[str, Option] = {opt.name: opt for opt in (
    # which items
    Option("categories", o.str_list, "subset of categories, a list or a comma-separated string",
           lmeval_reason=_TASK_PICKS),
    Option("category", None, "the category of one lm-eval task (set by its YAML)"),
    Option("ids", o.str_list, "keep only these item ids (a list or a comma-separated string), in bank order"),
    Option("limit_per_category", _optional(o.positive_int), "keep the first N items of each category",
           lmeval_reason="lm-eval's --limit caps each task (one task per category)"),
    Option("limit", _optional(o.positive_int), "keep the first N items", lmeval_reason="use lm-eval's --limit"),
    Option("bank", _text, "the registered bank to run (ub bank list; a lab's own, registered by its package)"),
    Option("bank_options", _optional(lambda value, name: _mapping(value, name)),
           "options of a plug-in's bank, a mapping ({answer_instruction: false}): ub_core.option_registry."
           "plugin_options", lmeval_reason="lm-eval takes each as a --metadata key of its own"),
    Option("size", _optional(_choice("subset", "full")), "the bank's edition: subset (stratified) or full"),
    Option("edition", _choice("subset", "full"), "the bank's edition: subset (stratified) or full"),
    Option("dataset", _text, "builtin, or a path / HF id of the official release (with ground_truth)",
           lmeval_reason=_BY_YAML),
    Option("ground_truth", _optional(_text), "the release's ground_truth_values.json", lmeval_reason=_BY_YAML),
    Option("split", _text, "the dataset split"),
    Option("subtasks", o.str_list, "subset of the stability subtasks", lmeval_reason=_TASK_PICKS),
    Option("subtask", None, "the subtask of one lm-eval stability task (set by its YAML)"),
    Option("source", _text, "builtin, or release (the paper's released question files, with bbh and mmlu)"),
    Option("bbh", _optional(_text), "folder of the BBH release files (source=release)"),
    Option("mmlu", _optional(_text), "folder of the MMLU release files (source=release)"),
    Option("task", _choice("percentile", "probability", "sampling"), "which odds questions"),
    Option("yaml_task", None, "the odds task of one lm-eval YAML (set by it)"),
    Option("shots", None, "few-shot counts (odds): a number or a list"),
    Option("shot_type", None, "kind of few-shot examples (odds): distribution, family, all"),
    Option("context", None, "question contexts (odds): none, health, finance, climate, ... or a list"),
    Option("families", None, "distribution families (odds), a list or a comma-separated string"),
    # what is asked and how
    Option("n_samples", o.positive_int, "answers collected per item",
           lmeval_reason="lm-eval fixes it as the task YAML's repeats"),
    Option("replies", None, "replies per odds sampling item (set by the YAML's repeats)"),
    Option("list_size", o.positive_int, "values asked per reply: 1, or list prompting (10 or 35)"),
    Option("value_source", _choice("final", "reasoning"), "the final answer, or the reasoning tokens",
           lmeval_reason=_BY_YAML),
    Option("max_attempts", o.positive_int, "attempts per answer slot before it is skipped",
           lmeval_reason="lm-eval sends each request once"),
    Option("temperature", _nonneg_real, "sampling temperature, >= 0", lmeval_reason=_GEN_KWARGS),
    Option("max_tokens", _optional(o.positive_int), "tokens per reply", lmeval_reason=_GEN_KWARGS),
    Option("epochs", _optional(o.positive_int), "runs per question (stability; default 5)",
           lmeval_reason="lm-eval fixes it as the task YAML's repeats"),
    Option("mode", _choice("prompt_logprobs", "top_logprobs"),
           "how option log-probabilities are read: prompt_logprobs (exact) or top_logprobs (top-k of one token)",
           lmeval_reason="lm-eval scores options by loglikelihood requests"),
    Option("chat_template", _optional(_nonblank), "the chat template to wrap the prompt in: 'model' or a tokenizer",
           lmeval_reason="use lm-eval's --apply_chat_template"),
    Option("delimiter", _optional(_text), "the text between the prompt and a reply", lmeval_reason=_BY_YAML),
    Option("end_of_answer", _nonblank, "eos, none, or the text that ends a reply"),
    Option("trust_remote_code", None, "allow a dataset's own loading code (HF datasets)"),
    # how it is scored
    Option("ks_ns", o.int_list, "the N of KS@N (a list or a comma-separated string)", lmeval_reason=_FIXED_NS),
    Option("threshold", o.threshold, "the KS test's p-value threshold, in (0, 1)"),
    Option("method", o.ks_method, f"the KS test: {' or '.join(KS_METHODS)}"),
    Option("gt_size", o.positive_int, "ground-truth draws per item", lmeval_reason=_BY_YAML),
    Option("seed", _nonneg_int, "seed (an integer >= 0)",
           lmeval_reason="lm-eval takes seeds as --seed (and a model's as --model_args seed=)"),
    Option("draws", lambda value, name: o.integer(value, name, low=2000),
           "Monte-Carlo draws of P(KS@N passes) (at least 2000)", lmeval_reason=_BY_YAML),
    Option("convention", _text, "paper (default) or release (the released code's) where they differ"),
    Option("kl_floor", _optional(_open_unit), "the floor the model's probabilities are raised to inside KL, in (0, 1)"),
    Option("equal_counts", _equal_counts,
           "calibration items with equal counts: drop (default, as the papers' baselines) or keep (uniform: keep)"),
    Option("enumeration", _choice("listed", "tree", "auto"),
           "listed (candidate texts), tree (reply tree) or auto (listed where possible)",
           lmeval_reason="lm-eval scores listed candidates only (loglikelihood requests)"),
    Option("max_missing", _optional(_share), "stop a reply tree once at most this mass is unexplored, in [0, 1)",
           lmeval_reason="lm-eval scores listed candidates only"),
    Option("max_requests", o.positive_int, "requests per reply tree",
           lmeval_reason="lm-eval scores listed candidates only"),
    Option("top_k", o.positive_int, "next tokens read per tree request",
           lmeval_reason="lm-eval scores listed candidates only"),
    Option("cells", o.boolean, "numeric cells in the reply tree (true/false)",
           lmeval_reason="lm-eval scores listed candidates only"),
    Option("target_ks_width", _unit_width, "stop a tree once the KS distance bounds are this narrow",
           lmeval_reason="lm-eval scores listed candidates only"),
    Option("target_p_pass_width", _unit_width, "stop a tree once the P(KS@N passes) bounds are this narrow",
           lmeval_reason="lm-eval scores listed candidates only"),
    # Bad Dice Players
    Option("protocol", _choice("batch", "independent"),
           "batch (one request for n values) or independent (n one-value requests)"),
    Option("n", lambda value, name: o.integer(value, name, low=1, high=100_000),
           "values asked per law (dice); questions asked (dice_mcq)"),
    Option("laws", o.str_list, "the laws to run, by the release's names (a list or a comma-separated string)"),
    Option("alpha", lambda value, name: o.real(value, name, 0, 1, low_open=True, high_open=True),
           "the significance level: a law passes when p > alpha"),
)}


@dataclass(frozen=True)
class Family:
    """A task family: the options its Inspect task takes (name -> default), those its lm-eval tasks take through
    ``--metadata``, and the convention values it knows."""

    name: str
    inspect: Mapping[str, Any]
    lmeval: tuple[str, ...] = ()
    lmeval_tasks: tuple[str, ...] = ()  # lm-eval task / group name prefixes of this family
    conventions: tuple[str, ...] = ()


_OPTION_LOGPROB = {"categories": None, "size": "subset", "limit_per_category": None, "mode": "prompt_logprobs",
                   "ids": None, "convention": "exclusive"}
_OPTION_LOGPROB_LMEVAL = ("bank", "category", "size", "ids", "trust_remote_code", "convention", "kl_floor",
                         "equal_counts")

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("ksn", {"categories": None, "n_samples": 100, "ks_ns": DEFAULT_NS, "threshold": 1e-4, "method": "paper",
                   "list_size": 1, "value_source": "final", "dataset": "builtin", "ground_truth": None,
                   "split": "train", "gt_size": 10_000, "seed": 0, "max_attempts": 5, "temperature": 1.0,
                   "max_tokens": None, "limit_per_category": None, "ids": None, "bank": "ksn", "bank_options": None},
           lmeval=("category", "ids", "bank", "threshold", "method"), lmeval_tasks=("ub_ksn",)),
    Family("ksn_logprob", {"categories": None, "ks_ns": DEFAULT_NS, "threshold": 1e-4, "method": "paper",
                           "chat_template": None, "delimiter": None, "gt_size": 10_000, "seed": 0, "draws": 2000,
                           "limit_per_category": None, "ids": None, "end_of_answer": "eos", "n_samples": 100,
                           "max_attempts": 5, "enumeration": "auto", "max_missing": None,
                           "max_requests": tree.MAX_REQUESTS, "top_k": tree.TOP_K, "bank": "ksn", "cells": True,
                           "target_ks_width": tree.TARGET_KS_WIDTH, "target_p_pass_width": tree.TARGET_P_PASS_WIDTH},
           lmeval=("category", "ids", "bank", "threshold", "method", "end_of_answer"),
           lmeval_tasks=("ub_ksn_logprob",)),
    Family("calibration", {**_OPTION_LOGPROB, "equal_counts": "drop"}, lmeval=_OPTION_LOGPROB_LMEVAL,
           lmeval_tasks=("ub_logit", "ub_calibration"), conventions=("exclusive", "paper")),
    Family("implicit", {**_OPTION_LOGPROB, "kl_floor": None}, lmeval=_OPTION_LOGPROB_LMEVAL,
           lmeval_tasks=("ub_logit", "ub_implicit"), conventions=("exclusive", "paper")),
    Family("explicit", _OPTION_LOGPROB, lmeval=_OPTION_LOGPROB_LMEVAL, lmeval_tasks=("ub_explicit",),
           conventions=("exclusive", "paper")),
    Family("odds", {"task": "percentile", "shots": None, "shot_type": None, "context": "none", "families": None,
                    "limit": None, "edition": "subset", "n_samples": 1000, "list_size": 1, "ks_ns": (10, 100, 1000),
                    "gt_size": 10_000, "seed": 0, "max_attempts": 5, "temperature": 0.7, "max_tokens": None,
                    "convention": "paper"},
           lmeval=("task", "shots", "shot_type", "context", "families", "edition", "list_size", "convention",
                   "yaml_task", "replies"), lmeval_tasks=("ub_odds",), conventions=("paper", "release")),
    Family("stability", {"epochs": None, "subtasks": None, "source": "builtin", "limit": None, "bbh": None,
                         "mmlu": None, "split": "test", "size": None, "seed": 0, "max_tokens": None,
                         "convention": "paper"},
           lmeval=("subtask", "source", "bbh", "mmlu", "split", "size", "convention"),
           lmeval_tasks=("ub_tar", "ub_stability"), conventions=("paper", "release")),
    Family("dice", {"protocol": "batch", "n": 1000, "convention": "default", "laws": None, "limit": None,
                    "alpha": 0.01, "seed": 0, "temperature": 1.0, "max_tokens": None, "max_attempts": 5},
           lmeval=("protocol", "n", "laws", "convention", "alpha", "seed", "replies"), lmeval_tasks=("ub_dice",),
           conventions=("default", "release")),
    # the dice paper's downstream MCQ task: n generated questions, their answer keys tested for uniformity over A-D
    Family("dice_mcq", {"n": 1000, "alpha": 0.01, "temperature": 1.0, "max_tokens": None}, lmeval=("n", "alpha"),
           lmeval_tasks=("ub_dice_mcq",)),
)}

#: lm-eval's ub task families: a hook's label -> the families whose --metadata options it takes
LMEVAL_FAMILIES = {"ub_ksn": ("ksn",), "ub_ksn_logprob": ("ksn_logprob",), "ub_logit": ("calibration", "implicit"),
                   "ub_explicit": ("explicit",), "ub_odds": ("odds",), "ub_tar": ("stability",), "ub_dice": ("dice",),
                   "ub_dice_mcq": ("dice_mcq",)}

#: Options that name which one of a group's tasks a task YAML is (its ``metadata``): ``--metadata`` giving another
#: value would turn every member of the group into the same task.
SET_BY_TASK_YAML = frozenset({"category", "subtask", "yaml_task", "replies"})

#: Every option name of a ub task in either framework.
UB_OPTION_NAMES = frozenset(VOCABULARY)

#: Option names that are --model_args of some lm-eval models too (``seed=`` of a vLLM or ub-openai model): lm-eval
#: mixes them into the metadata a hook sees, so a hook cannot tell them from a misplaced ub option and lets them
#: pass; ``model`` is here because it is a near miss of ``mode``.
MODEL_ARG_NAMES = frozenset({"seed", "temperature", "max_tokens", "chat_template", "tokenizer", "pretrained",
                             "trust_remote_code", "model", "max_length", "dtype", "device", "base_url"})


def family_options(family: str, framework: str = "inspect") -> dict[str, Option]:
    """The options ``family`` takes in ``framework`` (``inspect`` or ``lmeval``), each with the family's default."""
    fam = FAMILIES[family]
    if framework == "inspect":
        return {name: _in_family(fam, name, default) for name, default in fam.inspect.items()}
    if framework == "lmeval":
        return {name: _in_family(fam, name, fam.inspect.get(name)) for name in fam.lmeval}
    raise ValueError(f"framework must be inspect or lmeval, got {framework!r}")


def _in_family(fam: Family, name: str, default: Any) -> Option:
    worded = TASK_HELP.get(fam.name, {}).get(name)
    opt = replace(VOCABULARY[name], default=default, help=worded or VOCABULARY[name].help)
    if name == "convention" and fam.conventions:
        allowed = fam.conventions
        opt = replace(opt, check=lambda value, n: o.choice(value, n, allowed),
                      help=worded or f"{' or '.join(allowed)} (default {fam.inspect.get('convention', allowed[0])})")
    return opt


def task_docstring(family: str) -> str:
    """The docstring of ``family``'s Inspect task: its summary, then each option with its help, in the order of
    the task's parameters (what ``inspect info`` and ``help()`` show)."""
    lines = [TASK_SUMMARY[family], "", "Args:"]
    for name, opt in family_options(family, "inspect").items():
        lines.extend(textwrap.wrap(f"{name}: {opt.help}", 116, initial_indent="    ", subsequent_indent="        ",
                                   break_on_hyphens=False))
    return "\n".join(lines)


def default_of(family: str, name: str) -> Any:
    """The value ``family``'s task uses for ``name`` when a run leaves it unset."""
    return FAMILIES[family].inspect.get(name)


def format_default(value: Any) -> str:
    """A default as a user types it: ``(1, 2, 5)`` -> ``1,2,5``; None -> ``none``."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def check_option(family: str, name: str, value: Any, framework: str = "inspect") -> Any:
    """``value`` of option ``name`` checked as ``family`` takes it (a one-line OptionValueError)."""
    opts = family_options(family, framework)
    if name not in opts:
        raise o.OptionValueError(f"option {name} is not an option of {family}; it takes {', '.join(sorted(opts))}")
    return opts[name].checked(value)


def near_miss(key: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``key`` is a near miss of (a typo: ``threshhold`` for ``threshold``), else None."""
    close = difflib.get_close_matches(str(key), sorted(set(names)), n=1, cutoff=0.8)
    return close[0] if close and close[0] != key else None


def lmeval_family_of(task_name: str) -> str | None:
    """The hook label (:data:`LMEVAL_FAMILIES`) of an lm-eval task or group name of ours, else None; the longest
    matching prefix wins (``ub_ksn_logprob_x`` is ub_ksn_logprob's, not ub_ksn's)."""
    best = None
    for fam in FAMILIES.values():
        for prefix in fam.lmeval_tasks:
            matches = task_name == prefix or task_name.startswith(prefix + "_")
            if matches and (best is None or len(prefix) > len(best[1])):
                best = (fam.name, prefix)
    if best is None:
        return None
    return next(label for label, fams in LMEVAL_FAMILIES.items() if best[0] in fams)


def _lmeval_accepted(label: str) -> dict[str, Option]:
    out: dict[str, Option] = {}
    for fam in LMEVAL_FAMILIES[label]:
        out.update(family_options(fam, "lmeval"))
    return out


def _refusal(label: str, key: str, accepted: Mapping[str, Any], typed: bool = False) -> str | None:
    """Why ``label``'s lm-eval tasks refuse the metadata key ``key``, or None when they do not. ``typed``: the key
    comes from the run's own ``--metadata`` (not mixed with ``--model_args``), so an option lm-eval takes elsewhere
    (``temperature``: ``--gen_kwargs``) is refused with that way even where a model's argument has its name."""
    if key in accepted:
        return None
    if key in UB_OPTION_NAMES and (key not in MODEL_ARG_NAMES or (typed and VOCABULARY[key].lmeval_reason)):
        reason = VOCABULARY[key].lmeval_reason
        why = f" ({reason})" if reason else " (it would be ignored)"
        return f"option {key} is not an option of these lm-eval tasks{why}; they take {', '.join(sorted(accepted))}"
    if key not in MODEL_ARG_NAMES and (close := near_miss(key, accepted)) is not None:
        return f"option {key} is not an option of these lm-eval tasks; did you mean {close}?"
    return None


def check_metadata(label: str, metadata: Mapping[str, Any], accepted: Mapping[str, Any] | None = None,
                   ) -> dict[str, Any]:
    """lm-eval's ``--metadata`` for the ub task family ``label`` (:data:`LMEVAL_FAMILIES`), checked as Inspect
    checks ``-T`` options; the checked values are returned. A ub option the family does not take is refused with
    the options it does (and, where lm-eval cannot express it, why); a near miss of one it takes is refused with
    the right name; other keys (``--model_args``' ``pretrained=``, lm-eval's ``version``, another task's) pass
    untouched: lm-eval mixes them in. ``None`` values are left as they are (the hook's default). ``accepted``
    (name -> checker or None) overrides the registry's list, for a hook that takes extra keys."""
    opts = _lmeval_accepted(label) if accepted is None else \
        {k: Option(k, c, "") if not isinstance(c, Option) else c for k, c in accepted.items()}
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if key in opts:
            try:
                out[key] = opts[key].checked(value)
            except o.OptionValueError as exc:
                raise o.OptionValueError(f"{label}: {exc}") from None
        elif (why := _refusal(label, key, opts)) is not None:
            raise o.OptionValueError(f"{label}: {why}")
    return out


def precheck_run(task_names: Iterable[str], metadata: Mapping[str, Any]) -> list[str]:
    """``lm_eval --tasks ... --metadata ...`` checked before any model is loaded: every value against each ub task
    family of the run that takes it, every key against the families (a ub option they cannot take, or a near miss
    of one of their names, is a one-line OptionValueError; ``temperature`` and ``max_tokens`` name ``--gen_kwargs``,
    ``seed`` names ``--seed``). Returns the keys no ub task of the run takes (for one
    warning: lm-eval hands --metadata to every task, so such a key may be another task's). No ub task: nothing is
    checked, nothing returned."""
    labels = list(dict.fromkeys(lb for t in task_names if (lb := lmeval_family_of(str(t).strip())) is not None))
    if not labels or not isinstance(metadata, Mapping):
        return []
    by_label = {label: _lmeval_accepted(label) for label in labels}
    accepted = {name: opt for opts in by_label.values() for name, opt in opts.items()}
    unknown = []
    for key, value in metadata.items():
        if key in accepted:
            for label, mine in by_label.items():
                if key in mine:
                    check_metadata(label, {key: value}, mine)
            continue
        why = _refusal(labels[0] if len(labels) == 1 else ", ".join(labels), key, accepted, typed=True)
        if why is not None:
            raise o.OptionValueError(f"{', '.join(labels)}: {why}")
        unknown.append(key)
    return unknown


_PLUGIN_OPTIONS: dict[str, Option] = {}


def _check_plugin_option(opt: Option) -> None:
    from .plugins import check_scope

    check_scope(f"option {opt.name!r}", opt.bank, None)
    if opt.name in VOCABULARY:
        raise ValueError(f"option {opt.name!r} is a built-in option's name")
    if not callable(opt.apply):
        raise ValueError(f"option {opt.name!r} needs apply=, (problems, value) -> problems")
    if opt.default is not None:
        opt.checked(opt.default)


def plugin_options(bank: str | None = None) -> dict[str, Option]:
    """The installed plug-ins' options (name -> Option), read now; with ``bank``, those of that bank's runs."""
    from .plugins import OPTIONS_GROUP, entry_objects

    found = entry_objects(OPTIONS_GROUP, Option, _PLUGIN_OPTIONS, check=_check_plugin_option)
    return {name: opt for name, opt in found.items() if bank is None or opt.bank == bank}


def apply_bank_options(bank: str, problems: Any, values: Mapping[str, Any] | None) -> Any:
    """``problems`` of ``bank`` with the bank's plug-in options applied: each given value checked by its option
    (a one-line OptionValueError for a bad value or an option the bank does not take, naming those it does), each
    option not given at its default."""
    opts = plugin_options(bank)
    values = dict(values or {})
    unknown = sorted(set(values) - set(opts))
    if unknown:
        takes = ", ".join(sorted(opts)) or "none"
        raise o.OptionValueError(f"option bank_options: {unknown[0]!r} is not an option of bank {bank!r} "
                                 f"(it takes: {takes})")
    for name, opt in opts.items():
        value = opt.checked(values[name]) if name in values else opt.default
        if value is not None:
            problems = opt.apply(problems, value)
    return problems
