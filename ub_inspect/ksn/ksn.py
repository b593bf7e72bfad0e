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
from ub_inspect._options import OptionError, TaskOptions, first_per_category, registry_task, select_ids
from ub_core.option_registry import apply_bank_options

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
        raise ValueError("option dataset: the official release also needs "
                         "-T ground_truth=PATH/ground_truth_values.json")
    from ub_core.release_tools.official import load_official

    return load_official(dataset, ground_truth, split=split, categories=categories)


@task(name=registry_name("ksn"))
@registry_task("ksn")
def ksn(o: TaskOptions) -> Task:
    n_samples, bank = o.n_samples, o.bank
    # the default Ns are those n_samples reaches
    ns = o.ks_ns if o.given("ks_ns") else [n for n in DEFAULT_NS if n <= n_samples] or [n_samples]
    if max(ns) > n_samples:
        raise OptionError(f"option ks_ns: every N must be <= n_samples ({n_samples}), got {max(ns)}")
    tokens = o.max_tokens if o.max_tokens is not None else MAX_TOKENS.get(o.list_size, 72 * o.list_size)
    problems = load_problems(o.dataset, o.ground_truth, o.split, o.categories, bank)
    problems = list(apply_bank_options(bank, problems, o.bank_options))
    problems = select_ids(first_per_category(problems, o.limit_per_category), o.ids)
    # where the problems come from, not the problems: Inspect logs these arguments with every score
    source = {"version": bank_version(bank), "dataset": source_path(o.dataset) or "builtin",
              "ground_truth": source_path(o.ground_truth), "split": o.split, "bank": bank}
    return package_task(
        **plugin_metrics(bank),
        dataset=MemoryDataset([record_to_sample(p, o.list_size) for p in problems],
                              name="unpredictabench-ksn" if bank == "ksn" else f"unpredictabench-ksn-{bank}"),
        solver=collect_values(n_samples=n_samples, list_size=o.list_size, max_attempts=o.max_attempts,
                              value_source=o.value_source, temperature=o.temperature, max_tokens=tokens, **source),
        scorer=ksn_scorer(ks_ns=ns, threshold=o.threshold, method=o.method, gt_size=o.gt_size, gt_seed=o.seed,
                          **source),
        metadata={"bank": bank, "dataset": o.dataset, "n_samples": n_samples, "list_size": o.list_size},
        version=bank_version(bank),
    )
