"""Scheduling for ``scripts/test.sh`` (``-p tests.support.xdist_order --no-loadscope-reorder``): the test modules that
cost the most CPU are handed to the workers first, the rest by number of tests (xdist's own order).

With ``--dist loadscope`` a module runs whole on one worker, and xdist's default order (most tests first) sends the
modules with a few long tests (fresh venvs, framework subprocesses) last, where one worker runs them alone while the
other has nothing left (a 2-core CI machine lost a minute or more to that tail). Longest first keeps both busy until
the cheap modules at the end. The list is a hint only (CPU seconds of a 2-worker run, largest first): a module
missing from it, or a stale entry, changes when a test runs, never what it checks."""

from __future__ import annotations

HEAVY_FIRST = (
    "tests/frameworks/test_inspect_installs.py",  # a fresh venv with Inspect, then two installs of this package
    "tests/generic/test_custom_bank.py",
    "tests/generic/test_failure_to_mix.py",
    "tests/generic/test_plugin_api.py",
    "tests/frameworks/test_serving.py",
    "tests/frameworks/test_inspect_native.py",
    "tests/generic/test_parsing.py",
    "tests/calibration/test_option_logprob_real_banks.py",
    "tests/ksn_logprob/test_answer_distribution.py",
    "tests/report/test_report.py",
    "tests/calibration/test_reproduce_calibration.py",
    "tests/frameworks/test_lmeval_plugin.py",
    "tests/frameworks/test_inspect_options.py",
    "tests/frameworks/test_lmeval.py",
    "tests/stability/test_stability.py",
    "tests/report/test_report_provenance.py",
    "tests/frameworks/test_lmeval_plain_metadata.py",
    "tests/compare/test_compare_runs.py",
    "tests/ksn_logprob/test_differential_audit.py",
    "tests/hostile/test_api_bodies.py",
    "tests/hostile/test_official_truth_jail.py",
    "tests/report/test_report_real_families.py",
    "tests/implicit/test_prefix_parity.py",
    "tests/frameworks/test_inspect.py",
)


def _module(item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(session, config, items):
    """Stable reorder by module: the listed modules in the list's order, then the others by number of tests (most
    first); within a module the tests keep their order."""
    rank = {m: i for i, m in enumerate(HEAVY_FIRST)}
    counts: dict[str, int] = {}
    for item in items:
        counts[_module(item)] = counts.get(_module(item), 0) + 1
    items.sort(key=lambda item: (rank.get(_module(item), len(rank)), -counts[_module(item)], _module(item)))
