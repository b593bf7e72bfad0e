"""A plug-in package installed as ``pip install -e`` leaves it, without pip: its source folder on the path and a
``.dist-info`` whose ``entry_points.txt`` is written from the package's own pyproject.toml (every group: the
unpredictabench ones and Inspect's), for this process and its children; on exit every registry gets back its own
entries, so the plug-in leaks into no other test."""

from __future__ import annotations

import contextlib
import os
import sys
import tomllib
from pathlib import Path


def write_dist_info(package: Path, site: Path) -> dict:
    """The dist-info of the package at ``package`` (a folder with pyproject.toml) in ``site``; its [project]."""
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in eps.items()) + "\n"
        for group, eps in project.get("entry-points", {}).items()))
    return project


def forget_plugins(modules: tuple[str, ...] = ()) -> None:
    """Every registry without the plug-ins' entries, and the plug-ins' modules unloaded."""
    from ub_core import distributions, metric_spec, option_registry, plugins, problems, run_metrics

    for group, registry in ((plugins.BANKS_GROUP, problems.BANKS), (plugins.FAMILIES_GROUP, distributions.FAMILIES)):
        for name in plugins.plugin_names(group):
            registry.pop(name, None)
    metric_spec.forget_plugin_metrics()
    run_metrics._RUN_METRICS.clear()
    run_metrics._FAMILIES.clear()
    option_registry._PLUGIN_OPTIONS.clear()
    plugins.forget_scans()
    for mod in [m for m in sys.modules if any(m == p or m.startswith(p + ".") for p in modules)]:
        del sys.modules[mod]


@contextlib.contextmanager
def installed(package: Path, site: Path, monkeypatch, modules: tuple[str, ...]):
    """``package`` installed (module docstring) while the block runs; ``modules``: its import packages."""
    write_dist_info(package, site)
    monkeypatch.syspath_prepend(str(package))
    monkeypatch.syspath_prepend(str(site))
    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(package), str(root),
                                                      os.environ.get("PYTHONPATH", "")]))
    forget_plugins(modules)
    try:
        yield
    finally:
        forget_plugins(modules)
