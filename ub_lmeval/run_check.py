"""An ``lm_eval run`` of our tasks or models checked before any model loads (``unpredictabench_lm_eval_hook.precheck``,
for plain ``lm_eval`` and ``ub-lm-eval``): what lm-eval would otherwise find only after the model is loaded, or
never.

- :func:`check_model_args`: ``--model_args`` of our models (``ub-oracle``, ``ub-collapse``, ``ub-openai-*``), each
  key against the parameters the model takes and each value of ours checked, as Inspect checks ``-M``.
- :func:`check_members`: every member task of a requested ub group (``ub_dice`` is ``ub_dice_batch`` and
  ``ub_dice_independent``) against the run's ``--metadata``, through the member's own dataset hook, called as
  lm-eval will call it (the YAML's ``metadata`` under the run's, then its ``dataset_kwargs``) and its documents
  dropped. A member that contradicts an option (``n=200`` against ``ub_dice_independent``'s 1,000 replies a law),
  or an option its YAML fixes (``dataset_kwargs``), refuses the run in one line naming the member.

Each failure is a one-line :class:`ub_core.options.OptionValueError`, which lm-eval's entry point prints as
``lm_eval: error: ...`` with exit status 2.
"""

from __future__ import annotations

import inspect
import logging
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from ub_core.option_registry import SET_BY_TASK_YAML, near_miss
from ub_core.options import OptionValueError

from . import tasks_dir

__all__ = ["check_model_args", "check_members", "member_tasks", "OUR_MODELS"]

#: what lm-eval's CLI passes to every model's constructor, whatever ``--model_args`` says
PASSED_BY_LM_EVAL = frozenset({"batch_size", "max_batch_size", "device"})

#: our models whose ``--model_args`` are checked here (``ub-vllm``'s go to vLLM, which checks its own)
OUR_MODELS = ("ub-oracle", "ub-collapse", "ub-openai-completions", "ub-openai-chat")


def _model_class(model: str):
    from lm_eval.api.registry import get_model

    from . import models  # noqa: F401  (registers ours)

    return get_model(model)


def _parameters(cls) -> set[str] | None:
    """The keyword parameters ``cls(...)`` takes along its classes' ``__init__`` chain; None when one of them passes
    ``**kwargs`` to no parent that names them (anything goes)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        names |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"self"}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return names
        if klass.__module__.startswith("lm_eval.api"):  # lm-eval's base LM: no further parameter of a model
            return names
    return names


def check_model_args(model: str | None, model_args: Any) -> None:
    """``--model_args`` of one of our models (:data:`OUR_MODELS`): an unknown key (a near miss named) or a bad value
    of a key we define is a one-line OptionValueError. Other models: nothing is checked."""
    if model not in OUR_MODELS:
        return
    if model_args is None or model_args == "":
        return
    if isinstance(model_args, str):
        from lm_eval.utils import simple_parse_args_string

        try:
            model_args = simple_parse_args_string(model_args)
        except Exception as e:  # noqa: BLE001 - lm-eval's own parse error, as one line
            raise OptionValueError(f"--model {model}: --model_args {model_args!r}: {e}") from None
    if not isinstance(model_args, Mapping):
        raise OptionValueError(f"--model {model}: --model_args must be key=value pairs, got {model_args!r}")
    cls = _model_class(model)
    own = getattr(cls, "MODEL_ARGS", None)  # name -> checker, for a model that declares its arguments
    takes = set(own) if own is not None else (_parameters(cls) or set())
    takes |= PASSED_BY_LM_EVAL
    for key, value in model_args.items():
        if key not in takes:
            close = near_miss(key, takes)
            hint = f"; did you mean {close}?" if close else ""
            listed = ", ".join(sorted(takes - PASSED_BY_LM_EVAL))
            raise OptionValueError(f"--model {model}: unknown --model_args {key}{hint} ({model} takes {listed})")
        if own is not None and own.get(key) is not None and value is not None:
            try:
                own[key](value, key)
            except OptionValueError as e:
                raise OptionValueError(f"--model {model}: --model_args {e}") from None


# ------------------------------------------------------------------------------------------------ group members

def _naming(task: str, message: str) -> str:
    """``message`` as the member ``task``'s: a hook's family label (``ub_dice: ...``) becomes the task's name."""
    head, sep, rest = message.partition(": ")
    if sep and head.startswith("ub_") and " " not in head and task.startswith(head):
        return f"{task}: {rest}"
    return message if message.startswith(f"{task}:") else f"{task}: {message}"


@lru_cache(maxsize=1)
def _index() -> dict[str, tuple[Path, dict]]:
    """Our task folder's tasks and groups, by name: (YAML path, its keys as written; ``!function`` unresolved)."""
    from unpredictabench_lm_eval_hook import load_task_yaml

    out: dict[str, tuple[Path, dict]] = {}
    for path in sorted(Path(tasks_dir()).glob("*/*.yaml")):
        cfg = load_task_yaml(path, resolve=False)
        name = cfg.get("group") if "group" in cfg else cfg.get("task")
        if isinstance(name, str):
            out[name] = (path, cfg)
    return out


def member_tasks(names: Iterable[str]) -> list[str]:
    """The tasks of our folder that ``names`` run: a task itself, a group's members (nested groups expanded), in
    order, once each. Names that are not ours are left out."""
    index = _index()
    out: list[str] = []

    def visit(name: str, depth: int = 0) -> None:
        if name not in index or depth > 8:
            return
        cfg = index[name][1]
        if "group" in cfg:
            for member in cfg.get("task") or []:
                if isinstance(member, str):
                    visit(member, depth + 1)
        elif name not in out:
            out.append(name)

    for n in names:
        visit(str(n).strip())
    return out


def check_members(names: Iterable[str], metadata: Mapping[str, Any] | None,
                  model_args: Mapping[str, Any] | None = None) -> None:
    """Each member task of ``names`` called as lm-eval will call its dataset hook, with the run's ``--metadata``
    (over ``--model_args``, as lm-eval merges them); a member that refuses ends the run here, in one line naming the
    member. No ``--metadata``: nothing to check (each YAML runs as written)."""
    if not metadata:
        return
    from unpredictabench_lm_eval_hook import load_task_yaml

    run_meta = {**(model_args if isinstance(model_args, Mapping) else {}), **metadata}
    quiet = logging.getLogger("ub_lmeval")
    for task in member_tasks(names):
        path = _index()[task][0]
        cfg = load_task_yaml(path)
        fixed = cfg.get("dataset_kwargs") or {}
        own = cfg.get("metadata") or {}
        for key in metadata:
            if key in SET_BY_TASK_YAML and key in own and str(metadata[key]) != str(own[key]):
                raise OptionValueError(f"{task}: option {key}={metadata[key]!r} contradicts this task, whose YAML "
                                       f"sets {key}={own[key]!r}; pick the tasks in --tasks instead")
            if key in fixed:
                raise OptionValueError(f"{task}: option {key} is fixed by this task's YAML ({key}={fixed[key]!r}, "
                                       f"which --metadata cannot change); run the task whose YAML sets the value "
                                       f"you want")
        hook = cfg.get("custom_dataset")
        if not callable(hook):
            continue
        meta = {**(cfg.get("metadata") or {}), **run_meta}
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # a hook's notes are printed when lm-eval calls it
        try:
            hook(**meta, **fixed)
        except (ValueError, TypeError, KeyError, LookupError, OSError) as e:  # OptionValueError too
            raise OptionValueError(_naming(task, " ".join(str(e).split()) or type(e).__name__)) from None
        finally:
            quiet.setLevel(level)
