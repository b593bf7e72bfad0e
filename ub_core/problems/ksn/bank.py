"""The UnpredictaBench (KS@N) bank: 448 problems with the published composition (UnpredictaBench, sec. 3.1-3.2).

Composition, and how the published counts fit together:

- 398 generated problems: task types text explicit 159, text implicit 79, code explicit 80, code implicit 80.
  Of these, 80 are *multimodal* (mixtures built from 20 recognisable families); they are text-explicit prompts, so
  ``task_type == "text_explicit"`` for 159 problems = 79 unimodal + 80 multimodal. The unimodal ones are the 40
  families x 2 regimes per task type (320), less one text-explicit concentrated and one text-implicit spread-out
  problem (the two the published review removed: 320 - 2 = 318 unimodal). Half of the 398 are concentrated and
  half spread out (199 each).
- 50 hand-written problems: 30 real-world (subcategories os_concurrency 6, garbage_collection 6, network 5,
  distributed_systems 5, hashing 4, mcmc 4) and 20 shuffling (integer 6, ordinal 6, word 5, decimal 3).

``category`` is the 7-way split used for per-category scores and lm-eval subtasks: ``text_explicit`` (79,
unimodal), ``text_implicit`` (79), ``code_explicit`` (80), ``code_implicit`` (80), ``multimodal`` (80),
``real_world`` (30), ``shuffling`` (20). ``task_type`` keeps the published four-way type.

Problem ids are stable: ``te-<family>-<regime>``, ``ti-...``, ``ce-...``, ``ci-...``, ``mm-NN-<regime>``,
``rw-<subcategory>-NN``, ``sh-<type>-NN``.
"""

from __future__ import annotations

from functools import lru_cache

from ... import distributions as D
from ..base import Problem
from ..builder import prompt_index, scalar_problem
from .code_explicit import code_explicit_program, code_prompt
from .constants import BANK, BANK_VERSION
from .multimodal import multimodal_prompt
from .templates import template_for

CATEGORIES = ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal", "real_world",
              "shuffling")
TASK_TYPES = ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "real_world", "shuffling")
REGIME_SHORT = {"concentrated": "conc", "spread": "spread"}

# The release has no concentrated Rayleigh-mixture problem in its two text folders (the review removed them), so
# these two slots are empty, as there.
REMOVED = frozenset({"te-rayleigh_mixture-conc", "ti-rayleigh_mixture-conc"})


def _scalar_problem(pid: str, category: str, task_type: str, family: str, params: dict, regime: str,
                    prompt: str, modality: str = "unimodal", metadata: dict | None = None,
                    uid: str | None = None) -> Problem:
    """One problem of this bank (:func:`ub_core.problems.builder.scalar_problem`, stamped with its name and version)."""
    return scalar_problem(pid, family, params, prompt, bank=BANK, bank_version=BANK_VERSION, category=category,
                          task_type=task_type, regime=regime, modality=modality, metadata=metadata, uid=uid)


# ------------------------------------------------------------------------------------------------ text explicit

def text_explicit_prompt(family: str, params: dict, variant: int = 0) -> str:
    """Our wording: name the distribution and its parameters, ask for one draw. ``variant=1`` is a second
    phrasing, for a release row whose process repeats an earlier row's (every problem needs its own prompt)."""
    if variant:
        return f"Act as a sampler for {D.describe(family, params)}, and produce one value drawn from it at random."
    return (f"You are acting as a random number generator for {D.describe(family, params)}. "
            "Draw from it at random.")


def text_implicit_prompt(scenario: str) -> str:
    return scenario.strip()


# ------------------------------------------------------------------------------------------------ assembly

PREFIX = {"text_explicit": "te", "text_implicit": "ti", "code_explicit": "ce", "code_implicit": "ci"}


def generated_problem(row: dict, variant: int = 0) -> Problem:
    """The built-in problem of one generated release row (:data:`.release_processes.RELEASE_PROCESSES`): the
    row's process (family and parameters), our wording for its category. ``variant=1`` words it differently
    (a second phrasing; a code-implicit program takes the family's own construction instead of the release's, or
    the direct library call): the release repeats a process, and each problem needs a prompt of its own."""

    family, params = row["family"], D.validate(row["family"], row["params"])
    category, regime, short = row["category"], row["regime"], REGIME_SHORT[row["regime"]]
    from .release_names import release_folder_info  # the one parser of release folder names

    # the uid's own category (differs for the two misfiled programs)
    own = release_folder_info(row["uid_folder"])["category"]
    release = {"folder": row["folder"], "row": row["row"], "slot": row["slot"], "name": row["release_name"]}
    if row["note"]:
        release["note"] = row["note"]
    meta: dict = {"release": release}
    if category == "multimodal":
        pid = f"mm-{row['row']:02d}-{short}"
        return _scalar_problem(pid, "multimodal", "text_explicit", family, params, regime,
                               multimodal_prompt(params, variant), modality="multimodal", metadata=meta,
                               uid=row["uid"])
    pid = f"{PREFIX[own]}-{row['slot']}-{short}"
    if own == "text_explicit":
        prompt = text_explicit_prompt(family, params, variant)
    elif own == "text_implicit":
        prompt = text_implicit_prompt(template_for("text_implicit", family)(params))
    else:
        if own == "code_explicit":
            program = code_explicit_program(family, params)
        elif row.get("transform") and not variant:  # the release program's own construction
            from .code_transforms import transform_program

            program = transform_program(row["transform"], params, row.get("transform_params"))
        elif row.get("transform") or not variant:  # the family's own construction (a second one, for a variant)
            program = template_for("code_implicit", family)(params)
        else:
            program = code_explicit_program(family, params)
        if row.get("release_construction"):
            release["construction"] = row["release_construction"]
        meta["program"] = program
        prompt = code_prompt(program)
    modality = "multimodal" if family == "mixture" else "unimodal"
    return _scalar_problem(pid, category, category, family, params, regime, prompt, modality=modality,
                           metadata=meta, uid=row["uid"])


def generated_problems() -> list[Problem]:
    """The 398 generated problems, one per release row, in the release's order (task folder, then row)."""
    from .release_processes import RELEASE_PROCESSES

    order = {c: i for i, c in enumerate(CATEGORIES)}
    rows = sorted(RELEASE_PROCESSES, key=lambda r: (order[r["category"]], r["regime"], r["uid_folder"], r["row"]))
    out: list[Problem] = []
    seen: set[str] = set()
    for r in rows:
        p = generated_problem(r)
        if p.prompt in seen:  # the same process and wording as an earlier row (a repeat, or a direct library
            # call in a code-implicit row that reads as the code-explicit row's program): reword it
            p = generated_problem(r, variant=1)
        seen.add(p.prompt)
        out.append(p)
    return out


@lru_cache(maxsize=1)
def ksn_problems() -> tuple[Problem, ...]:
    """All 448 problems, in a stable order (generated by family, then multimodal, real-world, shuffling)."""
    from .realworld import realworld_problems
    from .shuffling import shuffling_problems

    problems = (*generated_problems(), *realworld_problems(), *shuffling_problems())
    ids = [p.id for p in problems]
    if len(set(ids)) != len(ids):
        raise RuntimeError("duplicate problem ids in the ksn bank")
    return problems


# ------------------------------------------------------------------------------------------------ prompt index

#: The bank's prompt index (``Bank.find``): the problem whose task text starts ``text`` (any instruction may follow
#: it, ours or a list-prompting one); the longest such prompt when several do.
find_ksn_problem = prompt_index(ksn_problems)
