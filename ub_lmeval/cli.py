"""``ub-lm-eval``: lm_eval's command line, unchanged, with our task folder and models added.

Same arguments as ``lm_eval``; ``--include_path`` defaults to our task folder (a user-given one is kept, and
ours is added beside it through lm-eval's comma-separated list only when the user gave none). Our models:
``ub-oracle``, ``ub-collapse`` (named so in the results: ``model=ub-oracle`` is added to ``--model_args`` when they
name no model), ``ub-vllm``, and ``ub-openai-completions`` / ``ub-openai-chat`` for an existing
OpenAI-compatible server (a document's repeats as one ``n=N`` request; see ``ub_lmeval.openai_models``). A server
that keeps failing ends the run with one line naming the endpoint and the cause (exit status 1); a bad ``--metadata``
option (:mod:`ub_lmeval.metadata`) with one line naming it (exit status 2).
"""

from __future__ import annotations

import sys

from . import tasks_dir

#: the offline models, named in lm-eval's results by themselves (lm-eval names a model by ``pretrained=``,
#: ``model=``, ``path=`` ... in --model_args, else by a random id that changes every run)
OFFLINE_MODELS = ("ub-oracle", "ub-collapse")
_NAME_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")  # lm-eval 0.4.13 GeneralConfigTracker


def _option(argv: list[str], name: str) -> tuple[int, str | None]:
    """The index and value of ``--name V`` or ``--name=V`` in argv (-1, None when absent)."""
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return i + 1, argv[i + 1]
        if a.startswith(name + "="):
            return i, a.split("=", 1)[1]
    return -1, None


def with_stable_model_name(argv: list[str]) -> list[str]:
    """``--model ub-oracle`` (or ``ub-collapse``) without a name in ``--model_args`` gets ``model=ub-oracle`` there,
    so the results' ``model_name`` and output folder are ``ub-oracle`` instead of a random id."""
    _, model = _option(argv, "--model")
    if model not in OFFLINE_MODELS:
        return argv
    i, args = _option(argv, "--model_args")
    if args is not None and any(f"{k}=" in args for k in _NAME_KEYS):
        return argv
    if args is None:
        return [*argv, "--model_args", f"model={model}"]
    argv = list(argv)
    joined = f"{args},model={model}" if args.strip() else f"model={model}"
    argv[i] = joined if argv[i] == args else f"--model_args={joined}"
    return argv


def requested_tasks(argv: list[str]) -> list[str]:
    """The task names ``--tasks`` asks for (comma-separated), or [] when it asks for anything that is not a plain
    name (a YAML file, a folder, a glob) or is absent."""
    _, tasks = _option(argv, "--tasks")
    names = [t.strip() for t in (tasks or "").split(",") if t.strip()]
    if any(("/" in t) or t.endswith((".yaml", ".yml")) or any(c in t for c in "*?[") for t in names):
        return []
    return names


def index_only_task_folders_when_they_hold(requested: list[str], manager_cls=None) -> None:
    """Make lm-eval's ``TaskManager`` index only the task folders (ours and ``--include_path``'s) when they hold every
    task ``requested``, and lm-eval's ~27,000 built-in task files only when they do not: indexing the built-ins costs
    ~10 CPU-seconds in every process, and a run of our tasks never reads them. The run is the same either way (the
    same task configs are found); a name the folders lack falls back to the full index, so lm-eval's own tasks and
    error messages are unchanged. Uses only the public constructor and ``all_tasks``."""
    if not requested:
        return
    if manager_cls is None:
        from lm_eval.tasks import TaskManager as manager_cls
    init = manager_cls.__init__
    ours = str(tasks_dir())

    def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None, *args, **kwargs):
        if include_defaults:
            paths = list(include_path) if isinstance(include_path, (list, tuple)) else \
                ([] if include_path is None else [include_path])
            if ours not in [str(x) for x in paths]:
                paths.append(ours)
            init(self, verbosity, paths, False, metadata, *args, **kwargs)
            if set(requested) <= set(self.all_tasks):
                return
        init(self, verbosity, include_path, include_defaults, metadata, *args, **kwargs)

    __init__.__wrapped__ = init  # type: ignore[attr-defined]
    __init__.__doc__ = init.__doc__
    manager_cls.__init__ = __init__


def main() -> None:
    from . import models  # noqa: F401  (register our models, ub-openai-* included, before lm_eval parses --model)

    argv = sys.argv[1:]
    if not any(a == "--include_path" or a.startswith("--include_path=") for a in argv):
        argv = ["--include_path", str(tasks_dir()), *argv]
    argv = with_stable_model_name(argv)
    import unpredictabench_lm_eval_hook as hook

    from ub_core.options import OptionValueError

    hook.check_options_before_the_model("ub-lm-eval")  # with or without the .pth hook
    index_only_task_folders_when_they_hold(requested_tasks(argv))
    cli_evaluate = hook.lm_eval_cli()  # our own one-line errors, below

    from .openai_models import ServerError

    sys.argv = ["lm_eval", *argv]
    try:
        cli_evaluate()
    except ServerError as e:  # the server failed after its retries: the error names the endpoint and the cause
        print(f"ub-lm-eval: error: {e}", file=sys.stderr)
        sys.exit(1)
    except OptionValueError as e:  # a bad --metadata option (ub_lmeval.metadata): one line, as Inspect's -T
        print(f"ub-lm-eval: error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
