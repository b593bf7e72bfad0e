"""lm-eval's private names we rely on are still where ``unpredictabench_lm_eval_hook.PRIVATE_API`` says, no other
module imports a private lm-eval module, and ``pyproject.toml`` allows only the lm-eval releases this suite passed
on. If lm-eval moves a name, this fails loudly instead of a user's run."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import importlib.metadata as md
import inspect
import re
from pathlib import Path

import pytest

import unpredictabench_lm_eval_hook as hook

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("lm_eval")


def _private_module(name: str) -> bool:
    return name == "lm_eval.__main__" or any(part.startswith("_") for part in name.split(".")[1:]) \
        and name.startswith("lm_eval.")


def _defined_in_source(module: str, dotted: str) -> bool:
    """``Class.attr`` (a method, or an attribute its own code sets) or a function, found in the module's source
    without running it: lm-eval's vLLM module imports vllm, which only the vLLM lane installs."""
    tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))
    owner_name, _, attr = dotted.rpartition(".")
    scope = tree if not owner_name else next(
        (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner_name), None)
    if scope is None:
        return False
    for node in ast.walk(scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
            return True
        if isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, ast.Store):
            return True
    return False


@pytest.mark.parametrize("module, names", sorted(hook.PRIVATE_API.items()))
def test_each_private_lm_eval_name_is_where_we_look_for_it(module, names):
    if importlib.util.find_spec("vllm") is None and module == "lm_eval.models.vllm_causallms":
        assert all(_defined_in_source(module, dotted) for dotted in names), f"{module}: {names} moved"
        return
    mod = importlib.import_module(module)
    for dotted in names:
        owner_name, _, attr = dotted.rpartition(".")
        owner = getattr(mod, owner_name) if owner_name else mod
        # a method or function, or an attribute the class's own code sets (self._seed = ...)
        assert hasattr(owner, attr) or (inspect.isclass(owner) and re.search(
            rf"self\.{attr}\s*(:[^=\n]*)?=", inspect.getsource(owner))), f"{module}.{dotted} moved"


def test_the_hooks_signatures_are_lm_evals():
    """The hook calls these positionally: a reordered signature would pass our values to the wrong parameter."""
    from lm_eval.tasks import TaskManager

    params = list(inspect.signature(TaskManager.__init__).parameters)[:5]
    assert params == ["self", "verbosity", "include_path", "include_defaults", "metadata"], params
    import lm_eval._cli.run as run

    assert isinstance(inspect.getattr_static(run.Run, "_execute"), staticmethod)
    assert callable(hook.load_task_yaml) and callable(hook.lm_eval_cli())


def test_no_other_module_imports_a_private_lm_eval_module():
    offenders = []
    for path in sorted(p for d in ("ub_lmeval", "ub_core", "ub_inspect", "benchmarks", "tools", "scripts")
                       for p in (ROOT / d).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            mods = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.relative_to(ROOT)}: {m}" for m in mods if _private_module(m)]
    assert not offenders, offenders
    assert set(hook.PRIVATE_API) >= {m for m in hook._WATCHED if _private_module(m)}


def test_pyproject_allows_only_the_lm_eval_releases_tested():
    """An upper bound, and the installed lm-eval (the one this suite runs on) inside the range: a newer lm-eval
    fails here until the private names above are checked against it and the bound is raised."""
    from packaging.requirements import Requirement

    text = (ROOT / "pyproject.toml").read_text()
    specs = [Requirement(m) for m in re.findall(r'"(lm-eval\[api\][^"]*)"', text)]
    assert len(specs) == 2, specs  # the lmeval extra and the test extra
    installed = md.version("lm_eval")
    for req in specs:
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), f"{req}: no upper bound"
        assert req.specifier.contains(installed, prereleases=True), f"{req} excludes the tested lm-eval {installed}"
        assert not req.specifier.contains("0.5.0"), f"{req} allows an lm-eval release no test has run on"
    assert specs[0].specifier == specs[1].specifier, specs
