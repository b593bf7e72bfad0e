"""The Bank record: one registration adds a bank; its version keys the cache and versions the Inspect tasks and the
lm-eval YAMLs; the packages have no module-level import circles."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from ub_core import problems as ub_problems
from ub_core.cache import truth_path
from ub_core.problems import Bank, Problem, bank_version, get_problem, load_bank
from support.lmeval_tasks import load_task_yaml

ROOT = Path(__file__).resolve().parents[2]


def _toy_problem(version: str | None) -> Problem:
    return Problem(id="toy-1", bank="toy", bank_version=version, category="toy", task_type="toy", family="uniform",
                   params={}, regime="none", modality="unimodal", support="continuous", answer_format="number",
                   prompt="Pick a number in [0, 1].", sampler=lambda rng, n: rng.uniform(0, 1, n))


def test_one_registration_adds_a_bank(monkeypatch, tmp_path):
    monkeypatch.setenv("UB_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(ub_problems, "BANKS", dict(ub_problems.BANKS))
    ub_problems.register_bank(Bank("toy", load=lambda size=None: (_toy_problem("7"),), version=lambda: "7",
                                   id_prefixes=("toy-",)))
    assert load_bank("toy")[0].id == "toy-1" and bank_version("toy") == "7"
    p = get_problem("toy-1")
    assert p.bank == "toy" and "toy" in ub_problems.bank_names()
    np.testing.assert_array_equal(p.truth(50, seed=3), p.draw(50, seed=3))
    path = truth_path(p, 50, 3)
    assert path.is_file() and path.parent.name == "toy-v7"  # the problem's bank version keys its cache file
    with pytest.raises(ValueError, match="already registered"):
        ub_problems.register_bank(Bank("toy", load=lambda size=None: (), version=lambda: "8"))


def test_problems_outside_the_registered_banks_are_never_cached(monkeypatch, tmp_path):
    monkeypatch.setenv("UB_CACHE_DIR", str(tmp_path))
    p = _toy_problem(None)
    np.testing.assert_array_equal(p.truth(20), p.draw(20))
    assert not list(tmp_path.rglob("*.npz"))


def test_every_problem_carries_its_banks_version():
    for name in ("ksn", "odds"):
        assert {p.bank_version for p in load_bank(name)} == {bank_version(name)}


def _registered_inspect_tasks() -> list[str]:
    """The names of every task the ``inspect_ai`` entry point registers (``ub_inspect._registry``)."""
    from inspect_ai._util.registry import registry_find, registry_info

    import ub_inspect._registry  # noqa: F401 - the entry point's module registers every task

    return sorted(registry_info(t).name for t in registry_find(lambda info: info.type == "task")
                  if registry_info(t).name.startswith("ub_inspect/"))


def test_every_registered_inspect_task_is_checked():
    # some of the tasks of today, so an entry point that registers nothing cannot pass the test below vacuously
    assert {"ub_inspect/ksn", "ub_inspect/ksn_logprob", "ub_inspect/odds", "ub_inspect/stability"} <= set(
        _registered_inspect_tasks())


@pytest.mark.parametrize("name", _registered_inspect_tasks())
def test_inspect_tasks_are_versioned_by_their_bank(name):
    """Every registered task (not a list written here) states its bank in its metadata, and its version is that
    bank's version. Built on one item per category where the task can limit itself, to stay quick."""
    from inspect_ai._util.registry import registry_info, registry_lookup

    factory = registry_lookup("task", name)
    params = registry_info(factory).metadata["params"]
    args = {"limit_per_category": 1} if "limit_per_category" in params else {"limit": 1} if "limit" in params else {}
    t = factory(**args)
    bank = (t.metadata or {}).get("bank")
    assert bank, f"{name}: the task's metadata names no bank"
    assert str(t.version) == bank_version(bank)


def _yaml_bank(path: Path, doc: dict) -> str:
    bank = (doc.get("metadata") or {}).get("bank")
    if bank:
        return bank
    folder = path.parent.name
    if folder == "option_logprob":
        return "implicit" if "implicit" in path.name else "calibration"
    return {"ksn": "ksn", "ksn_logprob": "ksn", "explicit": "explicit", "odds": "odds",
            "stability": "stability"}.get(folder, folder)


def test_lmeval_yaml_versions_equal_their_banks_version():
    seen = 0
    for path in sorted((ROOT / "ub_lmeval" / "task_yamls").rglob("*")):
        if not (path.suffix == ".yaml" or path.name.endswith("_yaml")):
            continue
        doc = load_task_yaml(path) or {}
        version = (doc.get("metadata") or {}).get("version")
        if version is None:
            continue
        seen += 1
        assert float(version) == float(bank_version(_yaml_bank(path, doc))), path.relative_to(ROOT)
    assert seen >= 30


def _module_imports(path: Path, package_root: Path, inside_functions: bool = False) -> set[str]:
    """Modules a file imports at module level, and with ``inside_functions`` also inside its functions."""
    rel = path.relative_to(package_root).with_suffix("")
    parts = list(rel.parts)
    me = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    pkg = me if parts[-1] == "__init__" else ".".join(parts[:-1])
    out = set()
    tree = ast.parse(path.read_text())
    for node in (ast.walk(tree) if inside_functions else tree.body):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return {m for m in out if m.split(".")[0] in ("ub_core", "ub_inspect", "ub_lmeval")}


def _with_parent_packages(module: str, deps: set[str], graph) -> set[str]:
    """Importing ``a.b.c`` first runs ``a/__init__`` and ``a/b/__init__``: those are imported too. Packages that
    contain ``module`` itself are already being imported when it runs, so they add no edge."""
    out = set(deps)
    for d in deps:
        parts = d.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if parent in graph and parent != module and not module.startswith(parent + "."):
                out.add(parent)
    return out


def test_parent_packages_count_as_imports():
    """A circle through a package's ``__init__`` is found: ``x.cache`` imports ``x.problems.base`` (running
    ``x.problems``), whose ``__init__`` imports ``x.cache``."""
    graph = {"x": set(), "x.cache": {"x.problems.base"}, "x.problems": {"x.cache"}, "x.problems.base": set()}
    assert _with_parent_packages("x.cache", graph["x.cache"], graph) == {"x.problems.base", "x.problems"}
    assert _with_parent_packages("x.problems.base", {"x.problems"}, graph) == {"x.problems"}


def _import_graph(inside_functions: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for package in ("ub_core", "ub_inspect", "ub_lmeval"):
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
            graph[name] = _module_imports(path, ROOT, inside_functions)
    return graph


def test_no_module_level_import_circles():
    graph = _import_graph(inside_functions=False)
    graph = {m: _with_parent_packages(m, {d for d in deps if d in graph and d != m}, graph)
             for m, deps in graph.items()}
    _assert_no_circle(graph)


def test_no_import_circles_through_function_level_imports():
    """A function-level import hides a circle from the check above without removing it
    (``ksn.realworld`` and ``ksn.shuffling`` imported ``ksn.bank``, which imports them inside a function). Every
    import, wherever it is, counts here; parent packages do not, since a function runs after they are loaded."""
    graph = _import_graph(inside_functions=True)
    _assert_no_circle({m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()})


def _assert_no_circle(graph: dict[str, set[str]]) -> None:
    # a package's __init__ importing its own submodules is how packages re-export; only other edges can close a circle
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m: str, stack: list[str]) -> bool:
        state[m] = 1
        for d in sorted(graph[m]):
            if m.startswith(d + ".") or d.startswith(m + "."):
                continue  # package <-> its own submodule
            if state.get(d) == 1:
                cycle.extend(stack[stack.index(d):] + [d] if d in stack else [m, d])
                return True
            if state.get(d) is None and visit(d, stack + [d]):
                return True
        state[m] = 2
        return False

    for m in sorted(graph):
        if state.get(m) is None and visit(m, [m]):
            break
    assert not cycle, " -> ".join(cycle)


def test_every_bank_answers_for_its_own_prompts_through_find_item():
    """Bank.find is each bank's prompt index; find_item asks them in turn, so the offline models need no per-bank
    code: one prompt of every registered bank (a KS@N prompt with a candidate after it, as the log-probability route
    sends it; a log-probability prompt with a continuation) resolves to that bank and item."""
    from ub_core.problems import find_item

    for name, bank in ub_problems.BANKS.items():
        assert bank.find is not None, name
        item = load_bank(name)[0]
        prompt = getattr(item, "full_prompt", None) or item.prompt
        found = find_item(prompt)
        assert found is not None and (found[0], found[1].id) == (name, item.id), name
    assert find_item(get_problem("te-poisson-conc").full_prompt + " {3}")[1].id == "te-poisson-conc"
    cal = load_bank("calibration")[0]
    assert find_item(cal.prompt + " red") == ("calibration", cal)
    assert find_item("What is the capital of France?") is None


def test_a_toy_bank_with_a_prompt_index_is_found(monkeypatch):
    from ub_core.oracle import find_problem
    from ub_core.problems import find_item

    monkeypatch.setattr(ub_problems, "BANKS", dict(ub_problems.BANKS))
    toy = _toy_problem("1")
    ub_problems.register_bank(Bank("toy", load=lambda size=None: (toy,), version=lambda: "1", id_prefixes=("toy-",),
                                   find=lambda text: toy if text.startswith(toy.prompt) else None))
    assert find_item(toy.full_prompt) == ("toy", toy) and find_problem(toy.full_prompt) is toy


def test_seed_sequence_never_aliases_large_seeds_and_keeps_small_ones():
    """Seeds below 2**32 keep the streams they always had (the seed as one 32-bit word); larger seeds get their
    own streams instead of wrapping onto small ones (wrapping, 2**32 would give seed 0's draws); negative seeds are
    refused."""
    import hashlib

    from ub_core.problems import seed_sequence

    digest = hashlib.sha256(b"te-normal-conc").digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    for seed in (0, 7, 2**32 - 1):
        old = np.random.SeedSequence([seed & 0xFFFFFFFF, *words]).generate_state(4)
        np.testing.assert_array_equal(seed_sequence("te-normal-conc", seed).generate_state(4), old)
    a = seed_sequence("te-normal-conc", 2**32).generate_state(4)
    b = seed_sequence("te-normal-conc", 0).generate_state(4)
    assert not np.array_equal(a, b)
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="seed must be an integer >= 0"):
            seed_sequence("te-normal-conc", bad)


def _layers(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between layers: a module stands for its layer, ``ub_core.report.summary`` for ``ub_core.report``."""
    def layer(m: str) -> str:
        return ".".join(m.split(".")[:2])

    out: dict[str, set[str]] = {}
    for m, deps in graph.items():
        out.setdefault(layer(m), set()).update(layer(d) for d in deps if d in graph and layer(d) != layer(m))
    for deps in list(out.values()):
        for d in deps:
            out.setdefault(d, set())
    return out


def test_a_circle_between_layers_is_found():
    """``compare`` imported ``report.readers`` inside a function and ``report.summary`` imported
    ``compare``: no two modules form a circle, the two layers do."""
    graph = {"ub_core.compare": {"ub_core.report.readers"}, "ub_core.report": set(), "ub_core.report.readers": set(),
             "ub_core.report.summary": {"ub_core.compare"}}
    _assert_no_circle({m: set(d) for m, d in graph.items()})
    with pytest.raises(AssertionError, match="ub_core.compare -> ub_core.report -> ub_core.compare"):
        _assert_no_circle(_layers(graph))


def test_no_import_circles_between_layers():
    """Every import, wherever it is, between the layers of ub_core (compare, report, metrics, problems, ...) and the
    adapters: the statistics live in ub_core.metrics, reading files in the report or the CLI."""
    _assert_no_circle(_layers(_import_graph(inside_functions=True)))
