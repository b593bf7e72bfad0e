"""Make plain ``lm_eval`` find our tasks and models (lm-eval 0.4.13 has no plugin discovery).

``unpredictabench-lm-eval.pth`` (installed beside this module in site-packages) runs :func:`install` at interpreter
start. That only appends a small finder to ``sys.meta_path``: nothing of lm-eval or of ours is imported until a
program imports lm-eval itself. Then, right after lm-eval's own module has run,

- ``lm_eval.tasks.manager``: ``TaskManager`` also scans our task folder (``ub_lmeval/task_yamls``) whenever it scans
  lm-eval's built-in tasks (``include_defaults=True``, the CLI's default) and the caller did not list our folder
  already; ``include_defaults=False`` with explicit paths stays exactly what the caller asked for;
- ``lm_eval.models``: our models are registered (``ub-oracle``, ``ub-collapse``, ``ub-vllm``,
  ``ub-openai-completions``, ``ub-openai-chat``), as ``import ub_lmeval`` does.

- ``lm_eval._cli.run``: ``lm_eval run`` checks the run before loading a model (:func:`precheck`: ``--model_args``
  of our models, ``--metadata`` against the ub tasks of ``--tasks`` and each member of their groups), and a bad ub
  option ends the run with one line and status 2, through ``lm_eval`` and ``python -m lm_eval`` alike
  (``lm_eval.__main__`` too, for the console script);

So ``lm_eval --tasks ub_logit``, ``lm_eval ls tasks`` and ``lm_eval validate --tasks ub_ksn`` work after a normal
install, and ``pip uninstall unpredictabench`` removes the ``.pth`` and this module with the rest: nothing is
written inside lm-eval. Set ``UB_LM_EVAL_HOOK=0`` to turn the hook off for one process. A failure inside the hook
is one warning, never a broken lm-eval: lm-eval then behaves as if we were not installed.

This module is also the one place that touches lm-eval's private API (:data:`PRIVATE_API`: ``lm_eval._cli.run``,
``lm_eval.__main__``, ``lm_eval.tasks._yaml_loader``); the rest of the package goes through :func:`load_task_yaml`,
:func:`lm_eval_cli` and :func:`check_options_before_the_model`. ``tests/frameworks/test_lmeval_private.py`` fails
loudly when an lm-eval release moves one of them, and ``pyproject.toml`` allows only the lm-eval releases it passed
on.

Later lm-eval releases are to discover plugins through entry points (models, group ``lm_eval.models``: merged
after 0.4.13; tasks, group ``lm_eval.tasks``: proposed); ``pyproject.toml`` declares both, so such a release finds
our models and tasks itself. The patch adds our folder only where the caller's paths lack it, so a task folder
given twice is not scanned twice.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import warnings

#: the modules whose loading we follow, and what to do right after each has run
_WATCHED = ("lm_eval.tasks.manager", "lm_eval.models", "lm_eval._cli.run", "lm_eval.__main__")

#: lm-eval's private names this package relies on (module -> names in it). The private modules are imported here
#: only; the private attributes below them are those our subclasses of lm-eval's classes use or override
#: (``ub_lmeval.selected_task``, ``ub_lmeval.openai_models``, ``ub_lmeval._vllm``).
PRIVATE_API = {
    "lm_eval._cli.run": ("Run._execute",),
    "lm_eval.__main__": ("cli_evaluate",),
    "lm_eval.tasks._yaml_loader": ("load_yaml",),
    "lm_eval.api.task": ("Task._instances",),
    "lm_eval.models.api_models": ("TemplateAPI._create_payload", "TemplateAPI._max_gen_toks", "TemplateAPI._seed",
                                  "TemplateAPI._concurrent"),
    "lm_eval.models.vllm_causallms": ("VLLM._model_generate",),
}


def tasks_dir() -> str:
    """Our task folder, found without importing ``ub_lmeval`` (whose ``__init__`` imports lm-eval)."""
    import importlib.util

    spec = importlib.util.find_spec("ub_lmeval")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("ub_lmeval")
    return os.path.join(list(spec.submodule_search_locations)[0], "task_yamls")


def _same_path(a: object, b: str) -> bool:
    try:
        return os.path.realpath(os.fspath(a)) == os.path.realpath(b)  # type: ignore[arg-type]
    except TypeError:
        return False


def _patch_task_manager(module) -> None:
    cls = module.TaskManager
    if getattr(cls.__init__, "_ub_tasks", False):
        return
    original = cls.__init__

    def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None, *args, **kwargs):
        if include_defaults:
            ours = tasks_dir()
            paths = list(include_path) if isinstance(include_path, (list, tuple)) else \
                ([] if include_path is None else [include_path])
            if not any(_same_path(p, ours) for p in paths):
                include_path = [*paths, ours]
        original(self, verbosity, include_path, include_defaults, metadata, *args, **kwargs)

    __init__._ub_tasks = True  # type: ignore[attr-defined]
    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    __init__.__doc__ = original.__doc__
    cls.__init__ = __init__


def _register_models(module) -> None:
    import ub_lmeval.models  # noqa: F401  (its @register_model decorators fill lm-eval's registry)


def _task_names(tasks) -> list[str]:
    if tasks is None:
        return []
    items = [tasks] if isinstance(tasks, str) else list(tasks)
    return [t.strip() for item in items for t in str(item).split(",") if t.strip()]


def precheck(args) -> None:
    """``lm_eval run`` checked before any model is loaded: ``--model_args`` of our models
    (:func:`ub_lmeval.run_check.check_model_args`); ``--metadata`` against the ub tasks of ``--tasks``
    (:func:`ub_core.option_registry.precheck_run`: a bad value, a near miss of one of our option names or an option
    these tasks cannot take raises a one-line ``OptionValueError``), then against each member task of a ub group
    (:func:`ub_lmeval.run_check.check_members`: a member that contradicts an option refuses the run, named); keys no
    ub task of the run takes are named in one warning (lm-eval hands them to every task: they may be another
    task's)."""
    metadata = getattr(args, "metadata", None)
    model_args = getattr(args, "model_args", None)
    model = getattr(args, "model", None)
    if isinstance(model, str) and model.startswith("ub-"):
        from ub_lmeval.run_check import check_model_args

        check_model_args(model, model_args)
    if not metadata:
        return
    from ub_core.option_registry import precheck_run

    names = _task_names(getattr(args, "tasks", None))
    unknown = precheck_run(names, metadata)
    if any(n.startswith("ub_") for n in names):
        from ub_lmeval.run_check import check_members

        check_members(names, metadata, model_args if isinstance(model_args, dict) else None)
    if unknown:
        import logging

        logging.getLogger("lm_eval").warning(
            "--metadata %s: not an option of the ub tasks in this run; passed on to the other tasks, which may take "
            "%s", ", ".join(unknown), "them" if len(unknown) > 1 else "it")


#: the program named in a one-line error (``ub-lm-eval`` sets its own name: :func:`check_options_before_the_model`)
_PROG = {"name": "lm_eval"}


def _patch_run(module) -> None:
    """``Run._execute`` (the ``lm_eval run`` subcommand) checks the run first (:func:`precheck`), and a bad ub option,
    found there or by a ub task's hook during the run, ends it with one line, ``lm_eval: error: ...``, and status 2,
    as argparse does for a bad argument. Here rather than around ``lm_eval.__main__.cli_evaluate`` only: ``python -m
    lm_eval`` runs that module's code as ``__main__``, which our loader never sees executed."""
    cls = module.Run
    original = cls._execute
    if getattr(original, "_ub_checked", False):
        return

    def _execute(args):
        from ub_core.options import OptionValueError

        try:
            precheck(args)
            return original(args)
        except OptionValueError as e:
            print(f"{_PROG['name']}: error: {e}", file=sys.stderr)
            raise SystemExit(2) from None

    _execute._ub_checked = True  # type: ignore[attr-defined]
    _execute.__wrapped__ = original  # type: ignore[attr-defined]
    cls._execute = staticmethod(_execute)


def _patch_main(module) -> None:
    """``lm_eval``'s entry point prints a bad ub option (``OptionValueError``, from :func:`precheck` or a ub task's
    hook) as one line, ``lm_eval: error: ...``, and exits with status 2, as argparse does for a bad argument."""
    original = module.cli_evaluate
    if getattr(original, "_ub_checked", False):
        return

    def cli_evaluate(*args, **kwargs):
        from ub_core.options import OptionValueError

        try:
            return original(*args, **kwargs)
        except OptionValueError as e:
            print(f"lm_eval: error: {e}", file=sys.stderr)
            raise SystemExit(2) from None

    cli_evaluate._ub_checked = True  # type: ignore[attr-defined]
    cli_evaluate.__wrapped__ = original  # type: ignore[attr-defined]
    cli_evaluate.__doc__ = original.__doc__
    module.cli_evaluate = cli_evaluate


def load_task_yaml(path, resolve: bool = True) -> dict:
    """A task YAML read as lm-eval reads it (``include:`` resolved; ``!function`` tags resolved to the functions, or
    with ``resolve=False`` left unresolved): lm-eval's own loader."""
    from lm_eval.tasks._yaml_loader import load_yaml

    return load_yaml(path, resolve_func=resolve)


def check_options_before_the_model(prog: str = "lm_eval") -> None:
    """``lm_eval run`` checks its ub options (:func:`precheck`) before any model loads, in this process, whether or
    not the ``.pth`` installed the hook (``ub-lm-eval`` calls this); a refusal's one line names ``prog``."""
    import lm_eval._cli.run

    _PROG["name"] = prog
    _patch_run(lm_eval._cli.run)


def lm_eval_cli():
    """lm-eval's command-line entry point, without our one-line error printing (a caller that prints its own)."""
    from lm_eval.__main__ import cli_evaluate

    return getattr(cli_evaluate, "__wrapped__", cli_evaluate)


_AFTER = {"lm_eval.tasks.manager": _patch_task_manager, "lm_eval.models": _register_models,
          "lm_eval._cli.run": _patch_run, "lm_eval.__main__": _patch_main}


class _Loader(importlib.abc.Loader):
    """Runs the real loader, then our step for that module."""

    def __init__(self, real, name: str) -> None:
        self.real, self.name = real, name

    def create_module(self, spec):
        return self.real.create_module(spec)

    def __getattr__(self, name):
        # everything else is the real loader's: `python -m lm_eval` (runpy) asks it for get_code, tools for
        # get_source or is_package
        return getattr(self.real, name)

    def exec_module(self, module) -> None:
        self.real.exec_module(module)
        try:
            _AFTER[self.name](module)
        except Exception as e:  # noqa: BLE001 - our hook must never break lm-eval
            warnings.warn(f"unpredictabench: could not add our tasks/models to lm-eval ({type(e).__name__}: {e}); "
                          f"use ub-lm-eval or --include_path \"$(ub tasks-dir)\"", RuntimeWarning, stacklevel=2)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _AFTER:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, fullname)
                return spec
        return None


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (the ``.pth`` calls this at interpreter start)."""
    if os.environ.get("UB_LM_EVAL_HOOK", "1") == "0":
        return
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())
    for name in _WATCHED:  # already imported (the hook installed late, e.g. by hand): patch now
        if name in sys.modules:
            _AFTER[name](sys.modules[name])
