"""No import circle among our modules, late (function-level) imports included (issue 45, item 7): a circle hidden by
an import inside a function still ties two layers together. Two levels are checked: modules, and the layers of a
package (``ub_core.compare``, ``ub_core.report``, ``ub_core.metrics``, ...: a module stands for its layer)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ub_core", "ub_inspect", "ub_lmeval")


def modules(root: Path = ROOT) -> dict[str, tuple[Path, bool]]:
    out = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph(mods: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports anywhere in its text (top level, in functions, under TYPE_CHECKING:
    all of them). ``from pkg import sub`` is an edge to ``pkg.sub`` where ``sub`` is a module, else to ``pkg``."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, is_package) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    here = here[:len(here) - (node.level - 1)]
                    base = ".".join(here + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            graph[name] |= {t for t in targets if t in mods and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    component.append(x)
                    if x == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layers(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph of layers: ``ub_core.report.summary`` is the layer ``ub_core.report``."""
    def layer(m: str) -> str:
        return ".".join(m.split(".")[:2])
    out: dict[str, set[str]] = {}
    for v, ws in graph.items():
        out.setdefault(layer(v), set())
        for w in ws:
            if layer(w) != layer(v):
                out[layer(v)].add(layer(w))
                out.setdefault(layer(w), set())
    return out


def test_the_check_sees_a_circle_hidden_by_a_late_import(tmp_path):
    pkg = tmp_path / "ub_core"
    (pkg / "report").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "compare.py").write_text("def f():\n    from .report.readers import load\n")
    (pkg / "report" / "__init__.py").write_text("")
    (pkg / "report" / "readers.py").write_text("load = 1\n")
    (pkg / "report" / "summary.py").write_text("from ..compare import f\n")
    for other in ("ub_inspect", "ub_lmeval"):
        (tmp_path / other).mkdir()
    graph = import_graph(modules(tmp_path))
    assert circles(graph) == []
    assert circles(layers(graph)) == [["ub_core.compare", "ub_core.report"]]


def test_no_import_circle_among_modules():
    assert circles(import_graph(modules())) == []


def test_no_import_circle_among_layers():
    assert circles(layers(import_graph(modules()))) == []
