"""Our tasks with Inspect's own tools: the headline score, ``inspect score``, log size, ``samples_df``
column specs, per-category uncertainty, stability's epochs and the 80-column terminal summary.

Every task runs once on ``ub/oracle`` (small selections; module fixture) and the tests read those logs the way
Inspect's tools do. ``inspect eval-retry`` from editable and wheel installs is in ``test_inspect_installs.py``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import headline_metric, read_eval_log  # noqa: E402

from ub_inspect.calibration import calibration  # noqa: E402
from ub_inspect.explicit import explicit  # noqa: E402
from ub_inspect.implicit import implicit  # noqa: E402
from ub_inspect.ksn import ksn  # noqa: E402
from ub_inspect.ksn_logprob import ksn_logprob  # noqa: E402
from ub_inspect.odds import odds  # noqa: E402
from ub_inspect.stability import stability  # noqa: E402

# task name -> (task, headline metric key, the value ub/oracle scores on it)
RUNS = {
    "ksn": (lambda: ksn(limit_per_category=2), "ks@100", 1.0),
    "ksn_logprob": (lambda: ksn_logprob(limit_per_category=1, enumeration="listed"), "p_pass@100", None),
    # the reply-tree route: a continuous problem and a listed one in one log (the default,
    # enumeration=auto); ub/oracle writes full precision, so the tree's budget is kept small: the log's shape is
    # checked here, not the bounds
    "ksn_logprob_tree": (lambda: ksn_logprob(ids="te-normal-conc,te-poisson-conc", ks_ns="10,100",
                                             max_requests=200), "p_pass@100", None),
    "odds_percentile": (lambda: odds(task="percentile", families="normal,geometric", shots="0,3"), "abs_error", 0.0),
    "odds_sampling": (lambda: odds(task="sampling", families="poisson,uniform", shots=0, n_samples=100,
                                   ks_ns="10,100"), "ks_stat", None),
    "calibration": (lambda: calibration(limit_per_category=2), "wd", 0.0),
    "implicit": (lambda: implicit(limit_per_category=2), "chebyshev", 0.0),
    "explicit": (lambda: explicit(limit_per_category=2), "mcq_acc", 1.0),
    "stability": (lambda: stability(epochs=3, limit=2, subtasks="navigate,college_mathematics"), "tar_a", 1.0),
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """One ub/oracle log per task (seeded, so every run of this module writes the same scores)."""
    out = {}
    for name, (make, _, _) in RUNS.items():
        log_dir = tmp_path_factory.mktemp(name)
        log = inspect_eval(make(), model="ub/oracle", log_dir=str(log_dir), display="none", seed=7)[0]
        assert log.status == "success", (name, log.error)
        out[name] = log
    return out


def _first_metric(log):
    """What Inspect and its viewer show as the run's score: the first metric of the first score."""
    first = log.results.scores[0]
    key = next(iter(first.metrics))
    return first, key, first.metrics[key].value


def _metric_values(log) -> dict:
    return {(s.scorer, s.name, s.reducer, k): m.value for s in log.results.scores for k, m in s.metrics.items()}


def _sample_values(log) -> dict:
    """Every sample's score values, NaN written as a string so that equal logs compare equal."""
    def plain(v):
        return {k: plain(x) for k, x in v.items()} if isinstance(v, dict) else ("nan" if v != v else v)

    return {(s.id, s.epoch, name): plain(sc.value) for s in log.samples for name, sc in (s.scores or {}).items()}


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------------------------------- the headline score

@pytest.mark.slow
@pytest.mark.parametrize("name", list(RUNS))
def test_headline_is_the_eval_familys_headline(logs, name):
    """The first metric of the first scorer (what ``inspect view`` shows as SCORE and ``evals_df``
    as ``score_headline_metric``) is the eval family's headline, with its standard error beside it."""
    _, key, oracle_value = RUNS[name]
    log = logs[name]
    first, metric, value = _first_metric(log)
    assert metric == key, [(s.name, list(s.metrics)[:3]) for s in log.results.scores[:3]]
    resolved = headline_metric(log)
    assert (resolved.score.name, resolved.name) == (first.name, key)
    assert "stderr" in first.metrics  # evals_df's score_headline_stderr reads this key
    if oracle_value is not None:
        assert value == pytest.approx(oracle_value, abs=1e-9)


@pytest.mark.slow
def test_ksn_headline_tells_oracle_from_collapse_in_evals_df(logs, tmp_path):
    from inspect_ai.analysis import evals_df

    collapse = inspect_eval(ksn(categories="code_explicit,multimodal", limit_per_category=3), model="ub/collapse",
                            log_dir=str(tmp_path), display="none")[0]
    df = evals_df([logs["ksn"].location, collapse.location], quiet=True).set_index("model")
    assert list(df["score_headline_metric"]) == ["ks@100", "ks@100"]
    assert df.loc["ub/oracle", "score_headline_value"] == 1.0
    assert df.loc["ub/collapse", "score_headline_value"] == 0.0
    # retry and failure counts stay in the log, after the headline
    metrics = {k for s in collapse.results.scores for k in s.metrics}
    assert {"retry_rate", "attempts_per_valid"} <= metrics


# -------------------------------------------------------------------------------------------------------- inspect score

# run in a fresh interpreter: Inspect's `inspect score LOG --overwrite --action overwrite` (its click command, as the
# `inspect` console script runs it) for each log given, printing each path once scored
_SCORE_EACH = """
import sys
from inspect_ai._cli.main import inspect
from inspect_ai._util.dotenv import init_dotenv
init_dotenv()
for path in sys.argv[1:]:
    inspect.main(args=["score", path, "--overwrite", "--action", "overwrite", "--display", "none"],
                 prog_name="inspect", auto_envvar_prefix="INSPECT", standalone_mode=False)
    print(path, flush=True)
"""


@pytest.mark.slow
def test_inspect_score_reproduces_every_tasks_metrics(logs, tmp_path):
    """``inspect score LOG`` (Inspect's own command line, in a fresh process) re-scores each task's log to
    exactly its original metrics: the scorers rebuild from the log's small arguments and find their problems again.
    One fresh process runs the command for every log in turn (each interpreter start costs seconds): every scorer is
    rebuilt there from the name and arguments its log records, never from this test process's registrations."""
    copies = {}
    for name, log in logs.items():
        copies[name] = tmp_path / f"{name}.eval"
        shutil.copy(log.location, copies[name])
    proc = subprocess.run([sys.executable, "-c", _SCORE_EACH, *map(str, copies.values())], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    paths = [str(c) for c in copies.values()]
    assert [line for line in proc.stdout.splitlines() if line in paths] == paths, proc.stdout[-3000:]
    for name, copy in copies.items():
        log = read_eval_log(str(copy))
        # every sample's score exactly as the run wrote it
        assert _sample_values(log) == _sample_values(logs[name]), name
        # and the run's metrics: the same numbers summed in another order (the run scored samples as they
        # finished, the re-scoring in log order), so equal up to rounding
        rescored, original = _metric_values(log), _metric_values(logs[name])
        assert rescored.keys() == original.keys(), name
        assert all(_close(rescored[k], original[k]) for k in original), \
            (name, {k: (original[k], rescored[k]) for k in original if not _close(rescored[k], original[k])})


# ------------------------------------------------------------------------------------------------------------- log size

@pytest.mark.parametrize("name", list(RUNS))
def test_solver_and_scorer_arguments_are_small(logs, name):
    """No bank in the arguments Inspect writes into the header and into every score event."""
    log = logs[name]
    args = {"scorers": [s.options for s in log.eval.scorers or []],
            "steps": [s.params for s in log.plan.steps],
            "results": [s.params for s in log.results.scores]}
    text = json.dumps(args)
    assert len(text) < 4000, text[:500]


@pytest.mark.slow
def test_ksn_log_is_small_per_problem(tmp_path):
    """A KS@N .eval log stays under 10 KB per problem (42 problems here; the 448-problem figure is in
    benchmarks/bench_inspect_log.py)."""
    log = inspect_eval(ksn(limit_per_category=6), model="ub/oracle", log_dir=str(tmp_path), display="none", seed=7)[0]
    size = Path(log.location).stat().st_size
    assert size / len(log.samples) <= 10_000, size
    with zipfile.ZipFile(log.location) as z:
        header = z.getinfo("header.json").file_size
    assert header <= 200_000, header


# --------------------------------------------------------------------------------------------------- samples_df columns

def test_samples_df_columns_are_typed_per_problem(logs):
    """``ub_inspect.analysis`` column specs give typed per-problem score columns in samples_df."""
    from inspect_ai.analysis import SampleSummary, samples_df

    from ub_inspect import analysis

    log = logs["ksn"]
    df = samples_df(log.location, columns=SampleSummary + analysis.columns("ksn"), quiet=True)
    assert len(df) == len(log.samples)
    assert df["ksn_ks@100"].dtype.kind == "f" and set(df["ksn_ks@100"]) == {1.0}
    assert df["ksn_wdz"].dtype.kind == "f" and df["ksn_n_valid"].dtype.kind in "if"
    # each cell is the sample's own value, not a string to parse
    assert dict(zip(df["id"], df["ksn_p@100"])) == {s.id: s.scores["ksn_scorer"].value["p@100"] for s in log.samples}
    assert len(df[df["ksn_ks@100"] == 1.0]) == len(df)  # a dashboard's filter, no parsing
    table = analysis.per_category(df, "ksn").loc[(str(log.eval.model), log.eval.task)]
    assert set(table.index) == {"text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal",
                                "real_world", "shuffling"}
    assert (table["ksn_ks@100"] == 1.0).all() and "ksn_jsd" in table
    for name, eval_family in (("ksn_logprob", "ksn_logprob"), ("calibration", "calibration"), ("implicit", "implicit"),
                         ("explicit", "explicit"), ("odds_percentile", "odds_question"),
                         ("odds_sampling", "odds_sampling")):
        df = samples_df(logs[name].location, columns=SampleSummary + analysis.columns(eval_family), quiet=True)
        key = f"{eval_family}_{RUNS[name][1]}"
        assert df[key].dtype.kind == "f" and df[key].notna().all(), (name, df.dtypes)
    df = samples_df(logs["stability"].location, columns=SampleSummary + analysis.columns("stability"), quiet=True)
    assert len(df) == len(logs["stability"].samples) and set(df["stability_correct"]) == {1.0}
    assert set(df["stability_parsed_answer"]) <= set("ABCDEFGHIJK")


# ------------------------------------------------------------------------------------------------ per category

def test_per_category_uncertainty(logs):
    """Per-category standard errors next to the per-category headline (not only the overall stderr)."""
    first = logs["ksn"].results.scores[0]
    for cat in ("text_explicit", "text_implicit", "shuffling"):
        assert first.metrics[cat].value == 1.0
        assert first.metrics[f"{cat}_stderr"].value == 0.0
    cal = logs["calibration"].results.scores[0].metrics
    assert {"colors", "colors_stderr", "wordproblems", "wordproblems_stderr"} <= set(cal)


# --------------------------------------------------------------------------------------------------------------- epochs

def test_stability_reports_the_epochs_it_ran(tmp_path):
    """``--epochs 2`` over a task built with its default: the log says 2 everywhere it says a number
    of epochs, and no score column reads as an accuracy when it is an agreement rate."""
    log = inspect_eval(stability(limit=2, subtasks="navigate"), model="ub/oracle", log_dir=str(tmp_path),
                       display="none", epochs=2)[0]
    assert log.eval.config.epochs == 2
    assert log.eval.task_args.get("epochs") in (None, 2) and (log.eval.metadata or {}).get("epochs", 2) == 2
    first = log.results.scores[0]
    assert first.metrics["epochs"].value == 2.0
    names = [f"{s.reducer or ''}_{k}" for s in log.results.scores for k in s.metrics]
    assert not [n for n in names if "tar" in n and "acc" in n], names


# ------------------------------------------------------------------------------------------------- the terminal summary

@pytest.mark.slow
def test_terminal_summary_fits_80_columns(tmp_path):
    """``inspect eval`` at 80 columns shows the headline and every category's KS@100 in full."""
    env = {**os.environ, "COLUMNS": "80", "INSPECT_LOG_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "inspect_ai._cli.main", "eval", "ub_inspect/ksn", "--model",
                          "ub/oracle", "-T", "limit_per_category=1", "--display", "plain"],
                         capture_output=True, text=True, env=env, timeout=300).stdout
    summary = out[out.index("total time"):out.index("Log:")]  # the scores (the log path is Inspect's to wrap)
    assert "…" not in summary, summary
    assert all(len(line) <= 80 for line in summary.splitlines())
    for label in ("ks@100", "text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal",
                  "real_world", "shuffling"):
        assert label in summary, (label, summary)


@pytest.mark.parametrize("name", list(RUNS))
def test_every_tasks_summary_fits_80_columns(logs, name):
    """The score grid Inspect prints (its own renderer) shows every metric name whole at
    80 columns, the headline first."""
    from inspect_ai._display.core.results import task_scores
    from rich.console import Console

    console = Console(width=80, record=True, color_system=None)
    for row in task_scores(logs[name].results.scores):
        console.print(row)
    text = console.export_text()
    assert "…" not in text and all(len(line) <= 80 for line in text.splitlines()), text
    for score in logs[name].results.scores:
        for key in score.metrics:
            assert key in text, (key, text)


def test_ub_score_reads_logs_with_and_without_the_bank_in_the_scorer_arguments(logs, tmp_path, capsys):
    """``ub score --samples`` reads only the per-sample values and ``-T`` options: a log that carries
    the bank in the scorer arguments and one results score per key rescores like one that does not."""
    from inspect_ai.log import EvalScore, read_eval_log, write_eval_log

    from ub_core import cli

    new = read_eval_log(logs["ksn"].location)
    old = new.model_copy(deep=True)
    bank = {s.id: {"id": s.id, "prompt": s.input} for s in new.samples}  # the shape, not the whole bank
    old.eval.scorers[0].options = {"problems": bank, **old.eval.scorers[0].options}
    old.results.scores = [EvalScore(name="ksn_scorer", scorer="ksn_scorer", metrics={}, params={"problems": bank})]
    paths = {"new": logs["ksn"].location, "old": str(tmp_path / "old.eval")}
    write_eval_log(old, paths["old"])
    rows = {}
    for which, path in paths.items():
        assert cli.main(["score", "--samples", path, "--json", "--workers", "1"]) == 0
        rows[which] = {r["id"]: r["ks@100"] for r in json.loads(capsys.readouterr().out)["problems"]}
    assert rows["old"] == rows["new"] == {s.id: s.scores["ksn_scorer"].value["ks@100"] for s in new.samples}
