"""A lab's own bank as a plug-in: ``examples/custom_bank`` is installed the way pip's editable
install leaves it (its source folder on the path, and a ``.dist-info`` with its ``entry_points.txt``, written here
from the example's own pyproject.toml), and its bank and its family are found through the entry-point groups by
``ub bank list`` (a fresh process), Inspect (``-T bank=``, on the oracle model) and lm-eval (``--include_path`` to
the example's YAML, on the offline oracle model). Offline, a few seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.plugin_install import write_dist_info
from ub_core import distributions, problems

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "custom_bank"


def _install(site: Path) -> None:
    """What ``pip install -e examples/custom_bank`` leaves for importlib.metadata: a dist-info with the entry
    points of the example's pyproject.toml (the source folder goes on the path)."""
    write_dist_info(EXAMPLE, site)


@pytest.fixture
def custom_bank(tmp_path, monkeypatch):
    """The example installed on sys.path (this process and its children); the registries get back their own
    entries afterwards, so the plug-in leaks into no other test."""
    site = tmp_path / "site"
    _install(site)
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(EXAMPLE), str(ROOT),
                                                      os.environ.get("PYTHONPATH", "")]))
    banks, families = dict(problems.BANKS), dict(distributions.FAMILIES)
    yield "custom_demo"
    for registry, before in ((problems.BANKS, banks), (distributions.FAMILIES, families)):
        for name in set(registry) - set(before):
            del registry[name]
    for mod in [m for m in sys.modules if m == "ub_custom_bank" or m.startswith("ub_custom_bank.")]:
        del sys.modules[mod]


def test_the_example_bank_and_family_are_found_through_entry_points(custom_bank):
    assert "zipf" not in distributions.FAMILIES and custom_bank not in problems.BANKS  # nothing imported it
    items = problems.load_bank(custom_bank)
    assert [p.id for p in items] == ["cust-zipf", "cust-normal", "cust-weekday"]
    assert {p.bank for p in items} == {custom_bank} and problems.bank_version(custom_bank) == "1"
    assert distributions.get_family("zipf").name == "zipf"  # the plug-in family, registered on first use
    assert problems.get_problem("cust-normal") is items[1]  # routed by the bank's id prefix
    assert problems.BANKS[custom_bank].find(items[2].full_prompt) is items[2]  # the offline models' prompt index
    assert items[0].truth(size=2000).min() >= 1 and set(items[2].truth(size=2000)) == {0.0, 1.0, 2.0}


@pytest.mark.slow
def test_ub_bank_list_in_a_fresh_process(custom_bank):
    run = subprocess.run([sys.executable, "-m", "ub_core.cli", "bank", "list", "--bank", custom_bank],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "cust-zipf" in run.stdout and "zipf" in run.stdout and run.stdout.rstrip().endswith("3 problems")
    bad = subprocess.run([sys.executable, "-m", "ub_core.cli", "bank", "list", "--bank", "nope"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "unknown bank 'nope'; known: ksn, odds" in bad.stderr and custom_bank in bad.stderr


def test_inspect_runs_the_plugin_bank_on_the_oracle(custom_bank, tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval

    from ub_inspect._options import OptionError
    from ub_inspect.ksn import ksn

    log = inspect_eval(ksn(bank=custom_bank, n_samples=50), model="ub/oracle", log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success", log.error
    assert log.eval.task_args.get("bank") == custom_bank and str(log.eval.task_version) == "1"
    assert sorted(s.id for s in log.samples) == ["cust-normal", "cust-weekday", "cust-zipf"]
    metrics = log.results.scores[0].metrics
    assert metrics["ks@50"].value == 1.0 and {"word_counts", "measurements"} <= set(metrics)  # per category
    with pytest.raises(OptionError, match=r"^ksn: unknown bank 'nope'; known: ksn, .*custom_demo"):
        ksn(bank="nope")
    with pytest.raises(OptionError, match="'stability' is not a bank of sampled problems"):
        ksn(bank="stability")


def test_lmeval_runs_the_plugin_bank_from_its_own_yaml(custom_bank):
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    import ub_lmeval  # noqa: F401  (registers ub-oracle)

    manager = TaskManager(include_path=str(EXAMPLE / "ub_custom_bank"), include_defaults=False)
    assert set(manager.all_tasks) == {"ub_ksn_custom_demo"}
    res = simple_evaluate(model="ub-oracle", tasks=["ub_ksn_custom_demo"], task_manager=manager)
    row = res["results"]["ub_ksn_custom_demo"]
    assert row["sample_len"] == 3 and row["ks@100,take_100"] == 1.0 and row["n_valid,take_100"] == 100.0
    assert res["configs"]["ub_ksn_custom_demo"]["metadata"]["version"] == "1"  # the bank's version


@pytest.mark.slow
def test_the_readme_commands_run_in_a_fresh_process(custom_bank, tmp_path):
    """The README's lm-eval command said ``lm_eval --model ub-oracle``, which fails (only ``ub-lm-eval``
    registers the offline models), and its sampling-free Inspect run scored 1 of 3 problems without a word about
    the other two. Both commands as the README writes them, each in a fresh process."""
    readme = (EXAMPLE / "README.md").read_text()
    assert "inspect eval ub_inspect/ksn_logprob -T bank=custom_demo --model ub/oracle" in readme
    assert "ub-lm-eval --model ub-oracle --tasks ub_ksn_custom_demo" in readme
    assert "lm_eval --model ub-oracle" not in readme
    # every problem by default; the tree's budget is cut here only to keep the test short
    run = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "ub_inspect/ksn_logprob", "-T",
                          f"bank={custom_bank}",
                          "--model", "ub/oracle", "--log-dir", str(tmp_path / "logs"), "--display", "plain",
                          "-T", "max_requests=200"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "COLUMNS": "400"})  # rich wraps the warning at the terminal's width
    assert run.returncode == 0, run.stderr[-2000:]
    out = " ".join((run.stdout + run.stderr).split())
    assert "left out" not in out, out[-2000:]
    # every problem scored: read from the log, not from the progress display (whose last "Samples: 3/3" frame
    # Inspect's plain display may never print)
    from inspect_ai.log import read_eval_log

    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and len(log.samples) == 3, (log.status, len(log.samples))
    assert all(s.scores for s in log.samples), [s.id for s in log.samples if not s.scores]
    run = subprocess.run([sys.executable, "-m", "ub_lmeval.cli", "--model", "ub-oracle", "--tasks",
                          "ub_ksn_custom_demo",
                          "--include_path", str(EXAMPLE / "ub_custom_bank")], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "ub_ksn_custom_demo" in run.stdout and "ks@100" in run.stdout
