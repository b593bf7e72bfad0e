"""The plug-in API (``ub_core.plugins``, ``docs/extending.md``): metrics, run metrics and options of a lab's package,
read from entry points when asked and scoped to the plug-in's bank or family, so that nothing a plug-in registers
changes a run of another bank. Two plug-ins are installed as ``pip install -e`` leaves them
(:mod:`support.plugin_install`): ``examples/failure_to_mix`` and ``tests/data/plugins/dice_demo``, a second one
written from ``docs/extending.md`` alone (a family, a bank on it, a family-scoped metric, a run metric, an option).
In-process and cheap: one small Inspect run and one lm-eval evaluation of the second plug-in."""

from __future__ import annotations

import ast
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from support.plugin_install import installed

ROOT = Path(__file__).resolve().parents[2]
FTM = ROOT / "examples" / "failure_to_mix"
DICE = ROOT / "tests" / "data" / "plugins" / "dice_demo"


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    with installed(FTM, tmp_path_factory.mktemp("ftm"), mp, ("ub_failure_to_mix",)), \
            installed(DICE, tmp_path_factory.mktemp("dice"), mp, ("ub_dice_demo",)):
        yield
    mp.undo()


def _builtin_banks() -> list[str]:
    from ub_core import plugins as pl, problems
    from ub_core.ksn_scoring import not_scorable

    names = [b for b in problems.bank_names() if b not in pl.plugin_names(pl.BANKS_GROUP)]
    return [b for b in names if (items := problems.load_bank(b)) and not_scorable(items[0]) is None]


# ------------------------------------------------------------------------------------------------ scope

def test_plugin_metrics_are_scoped_to_their_bank_and_family(plugins):
    from ub_core.metric_spec import metric_keys
    from ub_core.run_metrics import bank_families

    assert {"flip_rate", "flip_gap@100"} <= set(metric_keys("ksn", bank="ftm"))
    assert "six_share" in metric_keys("ksn", bank="dice_demo", families=bank_families("dice_demo"))
    assert "six_share" not in metric_keys("ksn", bank="dice_demo")  # a family's metric: by the family, not the bank
    unscoped = metric_keys("ksn")
    assert not {"flip_rate", "six_share"} & set(unscoped) and not any(k.startswith("flip_gap") for k in unscoped)
    # the per-N metric follows a run's Ns (-T ks_ns=5,20): one entry point, no hand-edited file
    assert [k for k in metric_keys("ksn", bank="ftm", ns=(5, 20)) if k.startswith("flip_gap")] == \
        ["flip_gap@5", "flip_gap@20"]


def test_no_plugin_metric_reaches_a_run_of_a_built_in_bank(plugins):
    """Every built-in bank of sampled problems (a few problems of each, the Bernoulli ones of ksn among them: ftm
    asks Bernoulli problems too): its scored rows, its lm-eval results and its Inspect values have exactly the
    built-in keys."""
    from ub_core.ksn_scoring import run_records, score_values
    from ub_core.metric_spec import metric_keys, run_specs
    from ub_core.oracle import oracle_values
    from ub_core.problems import load_bank
    from ub_core.run_metrics import bank_families, run_metrics_for
    from ub_inspect.ksn.scorer import plugin_metrics, score_value
    from ub_lmeval.ksn_hooks import process_results_ksn

    banks = _builtin_banks()
    assert "ksn" in banks
    builtin = metric_keys("ksn")
    for bank in banks:
        assert metric_keys("ksn", bank=bank, families=bank_families(bank)) == builtin
        assert run_metrics_for(bank) == [] and plugin_metrics(bank) == {}
        items = list(load_bank(bank))
        picked = items[:2] + [p for p in items if p.family == "bernoulli"][:1]
        for p in picked:
            row = score_values(p, oracle_values(p, 100, seed=3), wdz_resamples=99)
            assert set(row) - {"short@" + k.split("@")[1] for k in row if k.startswith("ks@")} == \
                {k for k, m in run_specs("ksn", source="score")}
            assert run_records(p, row) == {}
            doc = {"id": p.id, "bank": bank}
            assert tuple(process_results_ksn(doc, [[f"{{{v}}}" for v in oracle_values(p, 100)]])) == \
                metric_keys("ksn", "lmeval")
            record = type("R", (), {"attempts": 1, "slots": 1, "retried_slots": 0})()
            assert tuple(score_value(row, record, (1, 100), bank)) == metric_keys("ksn", ns=(1, 100))


def test_inspect_metrics_of_a_built_in_run_are_unchanged(plugins):
    from inspect_ai._util.registry import registry_params

    from ub_inspect.ksn.scorer import KSN_METRICS
    from ub_inspect.metrics import _spec_patterns, spec_metrics

    keys, with_stderr, counted = _spec_patterns("ksn")
    assert "flip_rate" not in keys and "six_share" not in keys and not any("flip_gap" in k for k in keys)
    assert "flip_rate" in _spec_patterns("ksn", "ftm")[0] and "flip_gap@*" in _spec_patterns("ksn", "ftm")[0]
    assert [registry_params(m) for m in KSN_METRICS] == [registry_params(m) for m in spec_metrics(
        "ksn", run_metrics=KSN_METRICS[2:4])]


def test_register_metric_scoped_to_a_bank():
    """A metric registered with a bank is in that bank's runs only: not in the built-in spec, not in a built-in
    problem's scored row."""
    from ub_core.ksn_scoring import score_values
    from ub_core.metric_spec import MetricSpec, metric_keys, register_metric, unregister_metric
    from ub_core.oracle import oracle_values
    from ub_core.problems import load_bank

    register_metric("ksn", MetricSpec("lab_extra", "extra", True, "score", bank="a_lab_bank",
                                      compute=lambda values, truth: 0.5))
    try:
        assert "lab_extra" in metric_keys("ksn", bank="a_lab_bank") and "lab_extra" not in metric_keys("ksn")
        p = load_bank("ksn")[0]
        assert "lab_extra" not in score_values(p, oracle_values(p, 20), ns=(10,), wdz_resamples=99)
    finally:
        unregister_metric("ksn", "lab_extra")


@pytest.mark.parametrize("target, why", [
    ("MetricSpec('loose', 'loose', True, 'score', compute=lambda v, t: 0.0)", "names no scope"),
    ("MetricSpec('mine', 'mine', True, 'score', bank='ksn', compute=lambda v, t: 0.0)", "not a plug-in's bank"),
    ("MetricSpec('fam', 'fam', True, 'score', family='normal', compute=lambda v, t: 0.0)",
     "not a plug-in's distribution family"),
    ("MetricSpec('nofn', 'nofn', True, 'score', bank='ftm')", "needs a compute function"),
])
def test_a_plugin_metric_that_could_change_another_bank_is_left_out(plugins, tmp_path, monkeypatch, target, why):
    """A plug-in's metric without a scope, or scoped to a built-in bank or family, would change built-in runs: it is
    left out, with its reason kept for the registry's messages, and the built-in keys stay as they were."""
    from ub_core import plugins as pl
    from ub_core.metric_spec import metric_keys

    name = re.match(r"MetricSpec\('(\w+)'", target).group(1)
    (tmp_path / "bad_metric_plugin.py").write_text(f"from ub_core.metric_spec import MetricSpec\nM = {target}\n")
    info = tmp_path / "bad_metric_plugin-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-metric-plugin\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[unpredictabench.metrics]\n{name} = bad_metric_plugin:M\n")
    before = metric_keys("ksn")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert metric_keys("ksn") == before and name not in metric_keys("ksn", bank="ftm")
        assert why in pl.load_errors(pl.METRICS_GROUP)[name]
    finally:
        monkeypatch.undo()
        import sys

        sys.modules.pop("bad_metric_plugin", None)


# ------------------------------------------------------------------------------------------------ lm-eval YAMLs

def test_our_yaml_lists_stay_the_built_in_spec_with_plugins_installed(plugins, tmp_path):
    """``python -m ub_lmeval.metric_lists`` (and ``--write``) with plug-ins installed: our YAMLs already are the
    spec, nothing is rewritten (a plug-in's metric is no metric of our tasks)."""
    from ub_lmeval import metric_lists, tasks_dir

    folder = tmp_path / "task_yamls"
    shutil.copytree(tasks_dir(), folder)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert metric_lists.main(["--tasks-dir", str(folder)]) == 0
    assert metric_lists.main(["--tasks-dir", str(folder), "--write"]) == 0
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_a_plugin_yaml_is_written_in_its_own_folder_with_the_union_of_the_lists(plugins, tmp_path, capsys):
    from lm_eval.tasks._yaml_loader import load_yaml

    from ub_lmeval import metric_lists, tasks_dir

    template = [row["metric"] for row in load_yaml(tasks_dir() / "ksn/_ub_ksn_template_yaml")["metric_list"]]
    assert metric_lists.main(["--bank", "ftm", "--task", "ub_mix", "--out", str(tmp_path)]) == 0
    doc = load_yaml(tmp_path / "ub_mix.yaml")
    listed = [row["metric"] for row in doc["metric_list"]]
    assert listed[: len(template)] == template  # extends the template's list, which it replaces in lm-eval
    assert {"flip_rate", "flip_gap@100", "step_likeness", "step_likeness_perfect"} <= set(listed)
    assert "step_likeness_stderr" not in listed  # lm-eval reports it from the aggregation's own stderr
    assert doc["metadata"] == {"bank": "ftm"}
    # the committed YAML of the example is what the generator writes now
    assert (tmp_path / "ub_mix.yaml").read_text() == (FTM / "ub_failure_to_mix" / "ub_mix.yaml").read_text()
    for inside in (tasks_dir(), tasks_dir() / "ksn", tasks_dir().parent):
        assert metric_lists.main(["--bank", "ftm", "--task", "ub_mix", "--out", str(inside)]) == 2
        assert "inside the installed ub_lmeval package" in capsys.readouterr().err
    assert not (tasks_dir() / "ksn" / "ub_mix.yaml").exists()


def test_a_bank_task_yaml_missing_the_bank_metrics_is_a_one_line_error(plugins, tmp_path):
    """lm-eval's ``metric_list`` in a task's YAML replaces the one it includes: a plug-in YAML with a list of its own
    that lacks the bank's metrics would drop them (lm-eval fails on a key a document returns and no list has)."""
    from ub_lmeval.selected_task import BankTask

    with pytest.raises(ValueError, match=r"^ub_mix: its metric_list lacks .*flip_rate.*python -m "
                                         r"ub_lmeval.metric_lists --bank ftm --task ub_mix"):
        BankTask({"task": "ub_mix", "metadata": {"bank": "ftm"},
                  "metric_list": [{"metric": "flip_rate", "aggregation": "mean", "higher_is_better": True}][:0]})
    task = BankTask({"task": "ub_dice", "metadata": {"bank": "dice_demo"}})  # no list: the spec's, when built
    assert {"ks@100", "six_share", "six_bias", "six_bias_problems"} <= set(task.aggregation())


# ------------------------------------------------------------------------------------------------ a second plug-in

def test_the_second_plugin_uses_only_the_documented_public_api():
    """Written from docs/extending.md alone: it imports only the modules the page names, and no private name."""
    allowed = {"ub_core.distributions", "ub_core.metric_spec", "ub_core.option_registry", "ub_core.options",
               "ub_core.problems", "ub_core.run_metrics", "ub_core"}
    tree = ast.parse((DICE / "ub_dice_demo" / "dice.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ub"):
            assert node.module in allowed, node.module
            assert not any(a.name.startswith("_") for a in node.names)
    docs = (ROOT / "docs" / "extending.md").read_text()
    for mod in allowed - {"ub_core"}:
        assert mod in docs


def test_the_recipe_quotes_the_example_as_it_is():
    """docs/extending.md's code is the example's code, its line references point at it, and its line count is true."""
    docs = (ROOT / "docs" / "extending.md").read_text()
    mix = (FTM / "ub_failure_to_mix" / "mix.py").read_text().splitlines()
    toml = (FTM / "pyproject.toml").read_text()
    for lang, block in re.findall(r"```(python|toml)\n(.*?)```", docs, re.S):
        for line in block.strip("\n").splitlines():
            assert line.strip() == "" or line in (mix if lang == "python" else toml.splitlines()), line
    for a, b in re.findall(r"`mix\.py` lines (\d+)-(\d+)", docs):
        first, last = mix[int(a) - 1], mix[int(b) - 1]
        assert first.strip() and not first.startswith((" ", ")")) and last.strip(), (a, b)
    package = FTM / "ub_failure_to_mix"
    count = sum(len(p.read_text().splitlines()) for p in package.iterdir() if p.suffix in (".py", ".yaml"))
    assert f"in {count} lines of Python and YAML" in docs


def test_the_second_plugin_runs_in_inspect_and_lmeval(plugins, tmp_path):
    from inspect_ai import eval as inspect_eval
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    import ub_lmeval  # noqa: F401  (registers ub-oracle)
    from ub_inspect.ksn import ksn
    from ub_lmeval.metric_lists import write_task_yaml

    log = inspect_eval(ksn(bank="dice_demo", n_samples=60, bank_options={"faces_in_prompt": True}),
                       model="ub/oracle", log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success", log.error
    assert log.samples[0].input.startswith("A die lands on 6 with probability 0.1 and on each other face equally "
                                           "often. Roll it. Its faces are 1 to 6.")
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert next(iter(metrics)) == "six_bias" and metrics["six_bias_problems"] == 3.0 and "six_share" in metrics
    write_task_yaml("dice_demo", "ub_dice_demo", tmp_path)
    res = simple_evaluate(model="ub-oracle", tasks=["ub_dice_demo"],
                          task_manager=TaskManager(include_path=str(tmp_path), include_defaults=False), limit=3)
    row = res["results"]["ub_dice_demo"]
    assert row["six_bias_problems,take_100"] == 3.0 and abs(row["six_bias,take_100"]) < 0.15
    assert isinstance(row["six_bias_stderr,take_100"], float)  # the run metric's own standard error
    # the same records give the same value in every framework (one RunMetric.evaluate)
    from ub_core.run_metrics import all_run_metrics
    from ub_lmeval.run_metric_hooks import aggregation

    records = [s.scores[next(iter(s.scores))].metadata["ub_run"]["six_bias"] for s in log.samples]
    assert aggregation("six_bias")(records) == all_run_metrics()["six_bias"].evaluate(records)["six_bias"] \
        == metrics["six_bias"]


def test_plugin_options_are_in_the_registry(plugins):
    from ub_core.option_registry import apply_bank_options, check_option, plugin_options
    from ub_core.options import OptionValueError
    from ub_core.problems import load_bank

    opts = plugin_options()
    assert {"answer_instruction", "faces_in_prompt"} <= set(opts)
    assert plugin_options("ftm").keys() == {"answer_instruction"} and opts["answer_instruction"].help
    assert opts["answer_instruction"].checked("false") is False
    with pytest.raises(OptionValueError, match=r"^option bank_options: 'faces_in_prompt' is not an option of bank "
                                               r"'ftm' \(it takes: answer_instruction\)$"):
        apply_bank_options("ftm", load_bank("ftm"), {"faces_in_prompt": True})
    with pytest.raises(OptionValueError, match="^option bank_options: expected a mapping"):
        check_option("ksn", "bank_options", "answer_instruction=false")
    with pytest.raises(OptionValueError, match="is not an option of bank 'ksn' \\(it takes: none\\)"):
        apply_bank_options("ksn", load_bank("ksn"), {"answer_instruction": False})


# ------------------------------------------------------------------------------------------------ the report

def test_the_report_reads_plugin_keys_when_it_runs(plugins):
    """The report's keys are the spec's when a report is built, not when it was imported: a plug-in's sample goes to
    the plug-in's section with its bank's own metrics, and a metric registered after import is read."""
    from ub_core.report.eval_families import extract_all

    record = {"p": 0.25, "r": 0.2, "n": 100.0}
    inspect_values = {"ks@100": 1.0, "flip_rate": 0.2, "flip_gap@100": 0.05, "n_valid": 100}
    for values, meta, doc in ((inspect_values, {"ub_run": {"step_likeness": record}}, {"category": "binary"}),
                              ({**inspect_values, "step_likeness": record, "step_likeness_perfect": record}, {},
                               {"bank": "ftm", "category": "binary"})):
        ((family, (category, metrics, payload)),) = extract_all(values, meta, doc)
        assert family == "step_likeness" and category == "binary"
        assert {"flip_rate", "flip_gap@100", "ks@100", "n_valid"} <= set(metrics)
        assert payload["ub_run"] == {"step_likeness": record}



def test_the_report_reads_a_metric_registered_after_import():
    """The report reads the KS@N keys from the spec when it extracts a sample, not once at import: a metric
    registered after the report module was imported is shown."""
    from ub_core.metric_spec import MetricSpec, register_metric, unregister_metric
    from ub_core.report.eval_families import extract_all

    register_metric("ksn", MetricSpec("late_metric", "late", True, "score", compute=lambda v, t: 0.5))
    try:
        ((family, (_, metrics, _)),) = extract_all({"ks@100": 1.0, "late_metric": 0.5}, {}, {})
        assert family == "ksn" and metrics["late_metric"] == 0.5
    finally:
        unregister_metric("ksn", "late_metric")


# ------------------------------------------------------------------------------------------------ step-likeness

def _s():
    import sys

    sys.path.insert(0, str(FTM))
    try:
        from ub_failure_to_mix.mix import GRID, step_likeness
    finally:
        sys.path.remove(str(FTM))
    return np.array(GRID), step_likeness


def _trapezoid_s(p, r):
    """The paper's S computed independently: 4 x the trapezoid area of |r - p| over the given points, exactly (the
    points as Fractions, one segment at a time)."""
    from fractions import Fraction

    p, r = [Fraction(x) for x in p], [Fraction(x) for x in r]
    return 4 * sum((p[i + 1] - p[i]) * (abs(r[i] - p[i]) + abs(r[i + 1] - p[i + 1])) / 2 for i in range(len(p) - 1))


def test_step_likeness_of_hand_made_curves_is_the_papers_formula():
    """On the paper's grid (0, 0.05, ..., 1), by hand: the step r = 1[p > 1/2] leaves |r - p| = p up to 1/2 and
    1 - p after it, linear between the nodes (1/2 at p = 1/2 from both sides), so the trapezoid is the exact area
    1/4 and S = 1; the diagonal S = 0; r = 1/2 has the same |r - p| as the step, S = 1; r = 1 has area 1/2, S = 2.
    The logistic r(1/2 + j/20) = 1 / (1 + 2^-j) (j = -10..10, slope ln 2 per 0.05) has the rational
    S = 84076213289051 / 141262786343250 = 0.59518 (the segment sum in exact arithmetic). On the grid 1/4, 1/2,
    3/4 the paper's S of the step is 4 (1/4 (1/4 + 1/2) / 2) 2 = 3/4 and the release's, which first extends the
    curve flat to p = 0 and 1 (adding 1/4 (0 + 1/4) / 2 at each end), is 1; the diagonal there: 0 and
    4 (1/32 + 1/32) = 1/4."""
    from fractions import Fraction

    grid, step_likeness = _s()
    assert np.array_equal(grid, np.arange(21) / 20)
    sizes = np.full(len(grid), 100)
    logistic = np.array([float(1 / (1 + Fraction(2) ** (10 - i))) for i in range(21)])
    for r, by_hand in (((grid > 0.5).astype(float), 1.0), (grid, 0.0), (np.full(21, 0.5), 1.0), (np.ones(21), 2.0),
                       (logistic, 84076213289051 / 141262786343250)):
        assert float(_trapezoid_s(grid, r)) == pytest.approx(by_hand, abs=1e-15)
        for convention in ("paper", "release"):  # the paper's grid holds 0 and 1: the conventions agree
            assert step_likeness(grid, r, sizes, convention)["value"] == pytest.approx(by_hand, abs=1e-12)
    short = np.array([0.25, 0.5, 0.75])
    for r, paper, release in (((short > 0.5).astype(float), 0.75, 1.0), (short, 0.0, 0.25)):
        assert step_likeness(short, r, [100] * 3)["value"] == pytest.approx(paper, abs=1e-12)
        assert step_likeness(short, r, [100] * 3, "release")["value"] == pytest.approx(release, abs=1e-12)
    with pytest.raises(ValueError, match="^step_likeness: convention is 'paper' or 'release', not 'area'$"):
        step_likeness(short, short, [100] * 3, "area")


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12, unique=True), st.data())
def test_step_likeness_is_the_papers_trapezoid_and_the_releases_extension_on_any_grid(ps, data):
    """Any grid and curve: the paper's S is 4 x the trapezoid area of |r - p| over the stated ps; the release's is the
    same after the curve is extended flat to p = 0 and p = 1 where it stops short; they agree when 0 and 1 are asked."""
    _, step_likeness = _s()
    p = np.array(sorted(ps))
    r = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=len(p), max_size=len(p))))
    sizes = np.full(len(p), 50)
    ext_p = np.r_[[0.0] if p[0] > 0 else [], p, [1.0] if p[-1] < 1 else []]
    ext_r = np.r_[[r[0]] if p[0] > 0 else [], r, [r[-1]] if p[-1] < 1 else []]
    assert step_likeness(p, r, sizes)["value"] == pytest.approx(float(_trapezoid_s(p, r)), abs=1e-12)
    assert step_likeness(p, r, sizes, "release")["value"] == pytest.approx(float(_trapezoid_s(ext_p, ext_r)), abs=1e-12)
    with_ends = np.unique(np.r_[0.0, p, 1.0])
    curve = np.interp(with_ends, p, r)
    assert step_likeness(with_ends, curve, np.full(len(with_ends), 50))["value"] == \
        pytest.approx(step_likeness(with_ends, curve, np.full(len(with_ends), 50), "release")["value"], abs=1e-12)


@pytest.mark.parametrize("n, convention", [(5, "paper"), (100, "paper"), (5, "release"), (100, "release")])
def test_step_likeness_of_a_perfect_sampler_matches_its_stated_expectation_and_stderr(n, convention):
    """Seeded draws of a perfect sampler (r_i = Binomial(n, p_i) / n) on the grid: the mean of S is the stated
    ``perfect`` within 5 standard errors of the Monte Carlo mean, and its standard deviation is the stated ``se``
    (computed at r = p, the truth) within 5 standard errors of a standard deviation (sd / sqrt(2 (M - 1))). The
    release's convention on the grid 0.1, ..., 0.85, where its flat extension to 0 and 1 counts."""
    p, step_likeness = _s()
    p = p if convention == "paper" else p[2:-3]
    sizes = np.full(len(p), n)
    stated = step_likeness(p, p, sizes, convention)
    rng = np.random.default_rng(20251118)
    m = 2000
    draws = np.array([step_likeness(p, rng.binomial(n, p) / n, sizes, convention)["value"] for _ in range(m)])
    assert abs(draws.mean() - stated["perfect"]) < 5 * draws.std(ddof=1) / math.sqrt(m)
    assert abs(draws.std(ddof=1) - stated["se"]) < 5 * stated["se"] / math.sqrt(2 * (m - 1))
    # and the large-n form sqrt(pi / (2 n)) of E[S] (E|r - p| ~ sqrt(2 p (1 - p) / (pi n)), integrated) near n = 100
    if n == 100 and convention == "paper":
        assert stated["perfect"] == pytest.approx(math.sqrt(math.pi / (2 * n)), rel=0.05)


def test_run_metric_evaluate_keeps_hostile_records_out(caplog):
    """Records read back from a log are hostile: what is not a record of numbers is left out, and a plug-in's record
    or compute that fails costs its metric (NaN, one warning), never the run."""
    import sys

    from ub_core.run_metrics import RunMetric

    p, _ = _s()
    sys.path.insert(0, str(FTM))
    try:
        from ub_failure_to_mix.mix import STEP_LIKENESS
    finally:
        sys.path.remove(str(FTM))
    good = [{"p": float(x), "r": float(x > 0.5), "n": 100.0} for x in p]
    hostile = [None, "text", 5, {}, {"p": True, "r": 1.0, "n": 100}, {"p": 0.3, "r": float("nan"), "n": 100},
               {"p": 0.35, "r": 1e400, "n": 100}, {"p": 0.45, "r": 0.0, "n": 0}]
    assert STEP_LIKENESS.evaluate(good + hostile)["step_likeness"] == pytest.approx(1.0)
    empty = STEP_LIKENESS.evaluate(hostile[:4])
    assert set(empty) == {"step_likeness", "step_likeness_stderr", "step_likeness_perfect"}
    assert all(math.isnan(v) for v in empty.values())
    assert all(math.isnan(v) for v in STEP_LIKENESS.evaluate([{"q": 1.0}]).values())  # a field missing: compute fails
    broken = RunMetric("broken", "broken", True, record=lambda problem, row: {"x": row["absent"]},
                       compute=lambda records: 1 / 0, bank="ftm")
    assert broken.record_of(None, {}) == {}
    assert math.isnan(broken.evaluate([{"x": 1.0}])["broken"])
    assert sum("run metric broken" in r.getMessage() for r in caplog.records) == 2
