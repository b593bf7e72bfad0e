"""UnpredictaBench (KS@N) as an Inspect task: ``inspect eval ub_inspect/ksn --model vllm/<model>``.

One Sample per problem; the solver collects ``n_samples`` answers (temperature 1.0, one request for all of
them where the provider supports ``num_choices``), the scorer applies KS@N, WDZ and JSD against the ground
truth. See README.md beside this file for options and results.
"""

from __future__ import annotations


from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from ub_core.problems import Problem, bank_version, load_bank
from ub_core.ksn_scoring import DEFAULT_NS, not_scorable

from ub_inspect._naming import package_task, registry_name
from ub_inspect._problems import source_path
from ub_inspect._options import (OptionError, choice, first_per_category, int_list, integer, ks_method, positive_int,
                                 real, select_ids, str_list, task_options)
from ub_inspect._options import threshold as check_threshold
from ub_core.option_registry import apply_bank_options, check_option

from .scorer import ksn_scorer, plugin_metrics
from .solver import collect_values

# max_tokens of UnpredictaBench (sec. 4.1): 64 per single answer, 640 / 2512 for lists of 10 / 35 values.
MAX_TOKENS = {1: 64, 10: 640, 35: 2512}


def record_to_sample(problem: Problem, list_size: int = 1) -> Sample:
    """One problem -> one Sample. List prompting applies to numeric problems only; the others keep one value
    per reply (their metadata records the list size actually used)."""
    k = list_size if problem.answer_format in ("number", "integer") else 1
    prompt = problem.full_prompt if k == 1 else problem.list_prompt(k)
    return Sample(id=problem.id, input=prompt, metadata={
        "category": problem.category, "task_type": problem.task_type, "family": problem.family,
        "regime": problem.regime, "modality": problem.modality, "support": problem.support,
        "answer_format": problem.answer_format, "subcategory": problem.subcategory or "", "list_size": k,
        "uid": problem.uid or "",
    })


def load_problems(dataset: str = "builtin", ground_truth: str | None = None, split: str = "train",
                  categories: tuple[str, ...] | None = None, bank: str = "ksn") -> list[Problem]:
    """A registered bank of sampled problems (``ksn``, the built-in one, by default; a plug-in's:
    :mod:`ub_core.plugins`), or the official release (a path or HF id plus its ground_truth_values.json)."""
    if dataset == "builtin":
        problems = list(load_bank(bank, categories=categories))
        for p in problems:
            why = not_scorable(p)
            if why:
                raise ValueError(f"option bank: {bank!r} is not a bank of sampled problems ({why})")
        return problems
    if bank != "ksn":
        raise ValueError("option bank: the official release is the ksn bank; leave bank out with dataset")
    if not ground_truth:
        raise ValueError("option dataset: the official release also needs -T ground_truth=PATH/ground_truth_values.json")
    from ub_core.release_tools.official import load_official

    return load_official(dataset, ground_truth, split=split, categories=categories)


@task(name=registry_name("ksn"))
def ksn(categories: str | list[str] | None = None, n_samples: int = 100, ks_ns: str | int | list[int] = DEFAULT_NS, threshold: float = 1e-4,
        method: str = "paper", list_size: int = 1, value_source: str = "final", dataset: str = "builtin",
        ground_truth: str | None = None, split: str = "train", gt_size: int = 10_000, seed: int = 0,
        max_attempts: int = 5, temperature: float = 1.0, max_tokens: int | None = None,
        limit_per_category: int | None = None, ids: str | list[str] | None = None, bank: str = "ksn",
        bank_options: dict | None = None) -> Task:
    """UnpredictaBench KS@N.

    Args:
        categories: subset of categories (text_explicit, text_implicit, code_explicit, code_implicit,
            multimodal, real_world, shuffling), a list or a comma-separated string.
        n_samples: answers collected per problem (paper: 100).
        ks_ns: the N of KS@N, each at most ``n_samples`` (default: those of 1,2,5,10,20,50,100 that are).
        threshold: KS p-value threshold, in (0, 1) (paper: 1e-4).
        method: ``paper`` (scipy exact for continuous targets, exact permutation otherwise) or ``exact``.
        list_size: values asked per reply: 1, or list prompting with 10 or 35 (UnpredictaBench, sec. 5.3).
        value_source: ``final`` answer or ``reasoning`` tokens (reasoning models, sec. 4.4).
        dataset: ``builtin``, or a path / HF id of the official release (with ``ground_truth``).
        ground_truth: the release's ground_truth_values.json.
        split: dataset split of the official release.
        gt_size: ground-truth draws per problem (paper: 10,000).
        seed: ground-truth seed (an integer >= 0).
        max_attempts: attempts per answer slot before it is skipped (paper: 5).
        temperature: sampling temperature, >= 0 (paper: 1.0).
        max_tokens: per reply (>= 1); default 64, 640 for lists of 10, 2512 for lists of 35.
        limit_per_category: keep only the first N problems of each category (quick checks).
        ids: keep only these problem ids (a list or a comma-separated string), in bank order.
        bank: the registered bank of sampled problems to run: ``ksn`` (UnpredictaBench), or a lab's own,
            registered by its package under the entry-point group ``unpredictabench.banks``
            (``examples/custom_bank``).
        bank_options: a plug-in bank's own options, a mapping (``-T 'bank_options={answer_instruction: false}'``;
            ``examples/failure_to_mix``).
    """
    with task_options("ksn", locals()):
        bank = str(bank)
        cats = str_list(categories, "categories")
        n_samples = positive_int(n_samples, "n_samples")
        if ks_ns is DEFAULT_NS:  # not given: the default Ns that n_samples reaches
            ks_ns = [n for n in DEFAULT_NS if n <= n_samples] or [n_samples]
        ns = int_list(ks_ns, "ks_ns")
        if max(ns) > n_samples:
            raise OptionError(f"option ks_ns: every N must be <= n_samples ({n_samples}), got {max(ns)}")
        threshold = check_threshold(threshold)
        list_size = positive_int(list_size, "list_size")
        method = ks_method(method)
        value_source = choice(value_source, "value_source", ("final", "reasoning"))
        gt_size = positive_int(gt_size, "gt_size")
        seed = integer(seed, "seed", low=0)
        max_attempts = positive_int(max_attempts, "max_attempts")
        temperature = real(temperature, "temperature", low=0)
        tokens = (positive_int(max_tokens, "max_tokens") if max_tokens is not None
                  else MAX_TOKENS.get(list_size, 72 * list_size))
        problems = load_problems(str(dataset), ground_truth, str(split), cats, bank)
        problems = list(apply_bank_options(bank, problems, check_option("ksn", "bank_options", bank_options)))
        problems = select_ids(first_per_category(problems, limit_per_category), ids)
    # where the problems come from, not the problems: Inspect logs these arguments with every score
    source = {"version": bank_version(bank), "dataset": source_path(dataset) or "builtin",
              "ground_truth": source_path(ground_truth), "split": str(split), "bank": bank}
    return package_task(
        **plugin_metrics(bank),
        dataset=MemoryDataset([record_to_sample(p, list_size) for p in problems],
                              name="unpredictabench-ksn" if bank == "ksn" else f"unpredictabench-ksn-{bank}"),
        solver=collect_values(n_samples=n_samples, list_size=list_size, max_attempts=max_attempts,
                              value_source=value_source, temperature=temperature, max_tokens=tokens, **source),
        scorer=ksn_scorer(ks_ns=ns, threshold=threshold, method=method, gt_size=gt_size, gt_seed=seed, **source),
        metadata={"bank": bank, "dataset": str(dataset), "n_samples": n_samples, "list_size": list_size},
        version=bank_version(bank),
    )
