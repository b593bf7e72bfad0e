"""``ub report``: real ksn runs in both frameworks (the examples/ksn_offline core), synthetic inputs of the other
families in their documented shapes, bad inputs, the examples, and the page in headless Chromium."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")
pytest.importorskip("lm_eval")

from ub_core import cli  # noqa: E402
from ub_core.metrics import wilson_interval  # noqa: E402
from ub_core.report import build_report, load_inputs  # noqa: E402

import support.report_synthetic as synth  # noqa: E402
from support.peak_memory import run_measured  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def _load_example(rel: str):
    spec = importlib.util.spec_from_file_location(Path(rel).stem, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Elements(HTMLParser):
    """Start tags with their attributes, and the text of elements with an id."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text_by_id: dict[str, str] = {}
        self._open: list[str | None] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag not in ("img", "input", "meta", "br", "link"):
            self._open.append(a.get("id"))

    def handle_endtag(self, tag):
        if self._open and tag not in ("img", "input", "meta", "br", "link"):
            self._open.pop()

    def handle_data(self, data):
        for i in self._open:
            if i:
                self.text_by_id[i] = self.text_by_id.get(i, "") + data

    def find(self, tag=None, **attrs) -> list[dict]:
        out = []
        for t, a in self.tags:
            if tag and t != tag:
                continue
            if all(v in (a.get("class") or "").split() if k == "class_" else a.get(k) == v
                   for k, v in attrs.items()):
                out.append(a)
        return out


def _parse(html: str) -> _Elements:
    p = _Elements()
    p.feed(html)
    return p


def _csv_rows(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _csv_value(rows, table, model, framework, metric, group="all"):
    hits = [r["value"] for r in rows if r["table"] == table and r["model"] == model and r["framework"] == framework
            and r["metric"] == metric and r["group"] == group]
    assert len(hits) == 1, (table, model, framework, metric, group, hits)
    return float(hits[0]) if hits[0] != "" else None


# ------------------------------------------------------------------------------------------------ real ksn runs

@pytest.fixture(scope="module")
def ksn_run(tmp_path_factory):
    """examples/ksn_offline/run_ksn.py on 2 shuffling problems: ub/oracle + ub/collapse in Inspect and
    ub-oracle + ub-collapse in lm-eval, then the report."""
    out = tmp_path_factory.mktemp("ksn_example")
    example = _load_example("examples/ksn_offline/run_ksn.py")
    assert example.main(["--out", str(out), "--categories", "shuffling", "--limit", "2"]) == 0
    return out


@pytest.mark.slow
def test_ksn_report_files(ksn_run):
    rep = ksn_run / "report"
    # summary.csv (long form): the Random Machine passes every problem, the collapsed model none at N = 100
    rows = _csv_rows(rep / "summary.csv")
    assert set(rows[0]) == {"table", "family", "model", "framework", "group", "metric", "value"}
    # Inspect's ub/oracle and lm-eval's ub-oracle are one model in the report
    for model, fw in (("ub-oracle", "inspect"), ("ub-oracle", "lm-eval")):
        assert _csv_value(rows, "ksn_leaderboard", model, fw, "ks@100") == 1.0
        assert _csv_value(rows, "ksn_leaderboard", model, fw, "problems") == 2
        assert _csv_value(rows, "ksn_leaderboard", model, fw, "invalid_rate") == 0.0
        # Wilson at k = n = 2: the lower end is n / (n + z^2) = 2 / (2 + 1.95996^2) = 0.3424
        assert _csv_value(rows, "ksn_leaderboard", model, fw, "ci_low") == pytest.approx(
            wilson_interval(2, 2)[0], abs=1e-9)
        assert wilson_interval(2, 2)[0] == pytest.approx(2 / (2 + 1.959963984540054 ** 2))
    for model, fw in (("ub-collapse", "inspect"), ("ub-collapse", "lm-eval")):
        assert _csv_value(rows, "ksn_leaderboard", model, fw, "ks@100") == 0.0
        assert _csv_value(rows, "ksn_curve", model, fw, "ks@1") == 1.0  # one value is always plausible
        assert _csv_value(rows, "ksn_curve", model, fw, "ks@100") == 0.0
        assert _csv_value(rows, "ksn_leaderboard", model, fw, "wdz") > 3  # far from the truth in z units
    assert _csv_value(rows, "ksn_leaderboard", "ub-oracle", "inspect", "retry_rate") == 0.0
    assert _csv_value(rows, "ksn_leaderboard", "ub-oracle", "lm-eval", "retry_rate") is None  # lm-eval never retries
    assert _csv_value(rows, "ksn_by_category", "ub-oracle", "inspect", "ks@100", group="category=shuffling") == 1.0

    # summary.json
    doc = json.loads((rep / "summary.json").read_text())
    assert set(doc) == {"generated_by", "inputs", "families", "tables"}
    assert len(doc["inputs"]["runs"]) == 4  # provenance of every run (tests/report/test_report_provenance.py)
    assert doc["families"] == ["ksn"]
    assert set(doc["tables"]) == {"ksn_leaderboard", "ksn_by_category", "ksn_curve"}
    assert doc["inputs"]["records"] == 8 and doc["inputs"]["skipped"] == []
    assert sorted(doc["inputs"]["models"]) == ["ub-collapse [inspect]", "ub-collapse [lm-eval]",
                                               "ub-oracle [inspect]", "ub-oracle [lm-eval]"]
    lead = doc["tables"]["ksn_leaderboard"]
    assert lead["columns"][:5] == ["model", "framework", "complete", "problems", "ks@100"]
    assert [r["ks@100"] for r in lead["rows"]] == [1.0, 1.0, 0.0, 0.0]  # sorted best first
    assert {"ks@100 shuffling", "wdz", "jsd", "retry_rate", "ci_low", "ci_high"} <= set(lead["columns"])
    curve = doc["tables"]["ksn_curve"]
    assert curve["columns"] == ["model", "framework", "complete", "problems", "ks@1", "ks@2", "ks@5", "ks@10", "ks@20",
                                "ks@50",
                                "ks@100"]

    # summary.md: a Markdown table per summary table
    md = (rep / "summary.md").read_text()
    assert "| model | framework | complete | problems | ks@100 | ci_low | ci_high | ks@100 shuffling |" in md
    assert re.search(r"^\| ub-oracle \| inspect \| PARTIAL \| 2 \| 1 \| 0\.3424 \| 1 \| 1 \|", md, re.M)
    assert re.search(r"^\| ub-collapse \| lm-eval \| PARTIAL \| 2 \| 0 \| 0 \| 0\.6576 \|", md, re.M)

    # index.html
    page = _parse((rep / "index.html").read_text())
    assert page.find("section", id="sec-ksn") and not page.find("section", id="sec-calibration")
    assert page.find("table", **{"data-table": "ksn_leaderboard"})
    assert page.find("input", id="hist-search") and page.find("select", id="hist-category")
    items = page.find("figure", class_="hist-item")
    assert sorted(i["data-id"] for i in items) == ["sh-integer-01", "sh-integer-02"]
    assert {i["data-category"] for i in items} == {"shuffling"}
    assert {i["data-family"] for i in items} == {"uniform_permutation"}
    for img in page.find("img"):
        assert (rep / img["src"]).is_file() and (rep / img["src"]).stat().st_size > 2000, img["src"]
    assert page.find("figure", **{"data-figure": "ksn-curve"})
    assert page.text_by_id["hist-count"].strip() == "2 of 2 shown"


def test_tidy_table_from_one_inspect_log_and_one_lmeval_output(ksn_run, tmp_path):
    """The lm-eval results file alone brings its samples files; the Inspect log keeps the 100 parsed values."""
    from inspect_ai.log import read_eval_log

    oracle_log = next(p for p in (ksn_run / "inspect_logs").glob("*.eval")
                      if read_eval_log(str(p), header_only=True).eval.model == "ub/oracle")
    results = next((ksn_run / "lm_eval" / "ub-collapse").rglob("results_*.json"))
    table = load_inputs([oracle_log, results])
    assert table.skips == []
    assert sorted(table.models()) == [("ub-collapse", "lm-eval"), ("ub-oracle", "inspect")]
    for r in table:
        assert r.eval_family == "ksn" and r.category == "shuffling" and len(r.payload["values"]) == 100
    # the same log in Inspect's JSON format reads the same
    from inspect_ai.log import write_eval_log

    as_json = tmp_path / "oracle.json"
    write_eval_log(read_eval_log(str(oracle_log)), str(as_json), format="json")
    again = load_inputs([as_json])
    assert again.skips == [] and [r.metrics for r in again] == [r.metrics for r in table if r.framework == "inspect"]
    res = build_report([oracle_log, results], tmp_path / "rep", max_histograms=1)
    assert len(list((tmp_path / "rep" / "hist").glob("*.png"))) == 1
    flat = table.to_dataframe() if importlib.util.find_spec("pandas") else None
    if flat is not None:
        assert set(flat["model"]) == {"ub-collapse", "ub-oracle"} and len(flat) == 4
    assert res.skipped == 0


def test_a_run_given_twice_counts_once(ksn_run, tmp_path):
    """The same lm-eval output copied to a second folder (a rerun, a backup): each problem is counted once, and the
    other copy is one skip naming the one used. Which copy is used follows the run's recorded date, then its path,
    never the file's modification time (``touch`` flipped a row)."""
    import os
    import shutil

    src = next((ksn_run / "lm_eval" / "ub-collapse").rglob("results_*.json")).parent
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(src, old)
    shutil.copytree(src, new)
    once = load_inputs([src])
    chosen = []
    for touched in (old, new):
        for f in touched.iterdir():
            os.utime(f, (2_000_000_000, 2_000_000_000))
        twice = load_inputs([old, new])
        assert len(twice.records) == len(once.records) == 2
        used = {r.source for r in twice.records}
        chosen.append(used)
        (other,) = {old, new} - {Path(next(iter(used))).parent}
        assert [s.reason for s in twice.skips] == [
            "every sample of this run is also in a newer run of the same model and settings "
            f"(2 in {next(iter(used))}); the newer one is used"]
        assert Path(twice.skips[0].path).parent == other
    assert chosen[0] == chosen[1]  # touching either copy changes nothing


# ------------------------------------------------------------------------------------------------ other families

@pytest.fixture(scope="module")
def family_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    synth.write_lmeval_families(root / "lm")
    synth.write_stability_results_only(root / "lm")
    synth.run_inspect_families(root / "inspect")
    res = build_report([root], root / "report")  # the report folder inside an input folder is not re-read
    return res


def _rows(res, name):
    return {(r["model"], r["framework"], *[r.get(k) for k in t.keys[2:]]): r
            for ts in res.tables.values() for t in ts if t.name == name for r in t.rows}


LM = ("hf/synthetic/model-1b", "lm-eval")
INS = ("ub-collapse", "inspect")  # Inspect's ub/collapse, folded


def test_family_sections_render(family_report):
    res = family_report
    assert res.skipped == 0
    assert list(res.tables) == ["calibration", "implicit", "explicit", "odds", "stability"]
    page = _parse(res.index.read_text())
    for fam in res.tables:
        assert page.find("section", id=f"sec-{fam}"), fam
    assert not page.find("section", id="sec-ksn") and not page.find("figure", class_="hist-item")
    kinds = [f["data-figure"] for f in page.find("figure", class_="fig")]
    assert kinds.count("calibration-heatmap") == 2 and "behaviour-bars" in kinds
    assert kinds.count("implicit-bars") == 2 and "odds-shots" in kinds
    for img in page.find("img"):
        assert (res.out_dir / img["src"]).is_file()
    md = (res.out_dir / "summary.md").read_text()
    for title in ("Numeric calibration", "Implicit probabilistic reasoning", "Explicit MCQ", "What are the odds",
                  "Run-to-run stability"):
        assert f"## {title}" in md


def test_calibration_values(family_report):
    rows = _rows(family_report, "calibration_leaderboard")
    for key in (LM, INS):
        r = rows[key]
        # each ordered pair is asked with counts (30, 10) and (10, 30): ideal P(first) 0.75 and 0.25; the model
        # says 0.9 -> WD = 0.15 and 0.65, mean 0.4 (Inspect ran 6 items = 3 pairs x both counts: also 0.4)
        assert r["pm"] == pytest.approx(0.8) and r["wd"] == pytest.approx(0.4)
        assert r["behaviour_pick_first"] == 1.0 and r["behaviour_pick_higher"] == 0.5
        assert r["behaviour_calibrated"] == 0.0
    # every pair has mean WD 0.4, so a clustered interval would be the point 0.4; both runs have fewer pairs than
    # MIN_CLUSTERS, so the items are resampled one by one: an interval around 0.4
    for key in (LM, INS):
        assert rows[key]["wd_ci_low"] < 0.4 < rows[key]["wd_ci_high"]
    assert rows[LM]["items"] == 24 and rows[INS]["items"] == 6


def test_implicit_explicit_odds_values(family_report):
    imp = _rows(family_report, "implicit_by_category")
    for key in (LM, INS):
        assert imp[(*key, "dice")]["chebyshev"] == pytest.approx(0.5 - 1 / 6)
        assert imp[(*key, "dice")]["manhattan"] == pytest.approx(5 * (1 / 6 - 0.1) + (0.5 - 1 / 6))
        assert imp[(*key, "coins")]["chebyshev"] == 0.0
        assert imp[(*key, "all")]["chebyshev"] == pytest.approx((0.5 - 1 / 6) / 2)
        assert imp[(*key, "all")]["argmax_acc"] is None  # NaN for both: no unique mode
    exp = _rows(family_report, "explicit_by_category")[(*LM, "all")]
    assert exp["mcq_acc"] == 0.75 and exp["p_correct"] == pytest.approx(0.6)
    assert (exp["mcq_acc_ci_low"], exp["mcq_acc_ci_high"]) == pytest.approx(wilson_interval(3, 4))
    fam = _rows(family_report, "odds_by_family")
    # abs_error = 10 / (1 + shots) (+5 for gamma), two items at 0 and two at 3 shots
    assert fam[(*LM, "percentile", "normal")]["mae"] == pytest.approx((10 + 10 + 2.5 + 2.5) / 4)
    assert fam[(*LM, "percentile", "gamma")]["mae"] == pytest.approx((15 + 15 + 7.5 + 7.5) / 4)
    assert fam[(*LM, "percentile", "normal")]["baseline_mae"] == 20.0
    assert fam[(*LM, "sampling", "normal")]["ks_stat"] == pytest.approx(0.3)
    shots = _rows(family_report, "odds_by_shots")
    assert shots[(*LM, "percentile", 0)]["mae"] == pytest.approx(12.5)
    assert shots[(*LM, "percentile", 3)]["mae"] == pytest.approx(5.0)
    # the paper's ±: SE across distributions' MAEs, ddof 1: 0 shots, MAEs 10 and 15 -> 5 / sqrt(2) /
    # sqrt(2) = 2.5; one distribution per family row -> none
    assert shots[(*LM, "percentile", 0)]["mae_se"] == pytest.approx(2.5)
    assert fam[(*LM, "percentile", "normal")]["mae_se"] is None
    ctx = _rows(family_report, "odds_by_context")
    assert ctx[(*LM, "percentile", "none")]["mae"] == pytest.approx(8.75)
    assert ctx[(*LM, "percentile", "none")]["mae_se"] == pytest.approx(2.5)  # MAEs 6.25 and 11.25


def test_stability_values(family_report):
    rows = _rows(family_report, "stability")
    lm = rows[(*LM, "ub_tar")]
    # runs [[1,1,1],[1,0,1],[0,0,0],[1,1,0]]: per-run accuracy [3/4, 1/2, 1/2] -> median 1/2, spread 1/4
    assert (lm["tar_r"], lm["tar_a"], lm["best_acc"], lm["worst_acc"]) == (0.25, 0.5, 0.75, 0.25)
    assert lm["median_acc"] == 0.5 and lm["acc_spread"] == 0.25 and lm["runs"] == 3
    ins = rows[(*INS, "synthetic_stability")]
    # Inspect reducers: q0 answers 42 in every epoch, q1 answers the epoch number -> TARa = TARr = 1/2;
    # per-epoch correctness [1,1,1] and [0,0,0] -> every accuracy 1/2, spread 0
    assert (ins["tar_a"], ins["tar_r"], ins["best_acc"], ins["worst_acc"]) == (0.5, 0.5, 0.5, 0.5)
    assert ins["acc_spread"] == 0.0 and ins["questions"] == 2
    agg = rows[("vllm/org/agg-model", "lm-eval", "ub_tar")]
    assert agg["source"] == "results" and agg["tar_r"] == 0.4 and agg["median_acc"] == 0.7


# ------------------------------------------------------------------------------------------------ bad inputs

def test_bad_files_are_counted_and_skipped(tmp_path, capsys):
    good = synth.write_lmeval_families(tmp_path / "lm")
    d = tmp_path / "mess"
    d.mkdir()
    (d / "broken.eval").write_bytes(b"PK\x03\x04 not really a zip")
    (d / "foreign.json").write_text('{"hello": 1}')
    (d / "results_2026-01-01T00-00-00.000001.json").write_text("{ truncated")
    (d / "notes.txt").write_text("not an input; ignored without a count")
    lines = [json.dumps({"doc_id": 0, "doc": {"id": "e0", "category": "dice"}, "metrics": ["mcq_acc"],
                         "mcq_acc": 1.0, "filter": "none"}),
             "{this is not json",
             json.dumps({"doc_id": 2, "doc": {"id": "e2"}, "metrics": ["bleu"], "bleu": 0.3, "filter": "none"})]
    (d / "samples_ub_explicit_2026-01-01T00-00-00.000001.jsonl").write_text("\n".join(lines) + "\n")
    args = [str(good), str(d), str(tmp_path / "missing.eval"), str(ROOT / "pyproject.toml")]
    table = load_inputs(args)
    reasons = {Path(s.path).name: s.reason for s in table.skips}
    assert len(table.skips) == 7, table.skips
    assert "not a readable Inspect log" in reasons["broken.eval"]
    assert "not an Inspect log or lm-eval output" in reasons["foreign.json"]
    assert "not an lm-eval results file" in reasons["results_2026-01-01T00-00-00.000001.json"]
    assert "no such file" in reasons["missing.eval"] and "not an Inspect log" in reasons["pyproject.toml"]
    samples = "samples_ub_explicit_2026-01-01T00-00-00.000001.jsonl"
    assert reasons[f"{samples}:2"].startswith("bad JSON line")
    assert reasons[f"{samples}:3"] == "no metric keys of a known family"
    # the good line of the damaged samples file is kept (model: its folder's name, as its results file is broken)
    kept = [r for r in table.of_eval_family("explicit") if r.model == "mess"]
    assert len(kept) == 1 and kept[0].problem_id == "e0"

    assert cli.main(["report", *args, "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err
    assert err.count("ub: skipped ") == 7 and "Traceback" not in err
    doc = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert len(doc["inputs"]["skipped"]) == 7
    page = _parse((tmp_path / "rep" / "index.html").read_text())
    assert page.text_by_id["skip-count"] == "7" and page.find("details", id="skipped")

    # nothing usable at all: one line, exit status 2
    assert cli.main(["report", str(d / "broken.eval"), "--out", str(tmp_path / "rep2")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("ub: error: no usable data in the inputs (1 skipped")


# ------------------------------------------------------------------------------------------------ examples

def test_score_jsonl_example(capsys):
    """examples/score_jsonl: what its README promises."""
    answers = ROOT / "examples" / "score_jsonl" / "answers.jsonl"
    assert cli.main(["score", "--samples", str(answers), "--json", "--workers", "1"]) == 0
    rep = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in rep["problems"]}
    assert rows["sh-integer-01"]["ks@100"] == 1.0 and rows["te-normal-conc"]["ks@100"] == 1.0
    assert rows["te-poisson-conc"]["ks@100"] == 0.0 and rows["te-poisson-conc"]["ks@1"] == 1.0
    assert rows["sh-integer-01"]["n_failed"] == 1 and rows["sh-integer-01"]["n_valid"] == 100
    assert rep["errors"] == []
    for script in ("examples/score_jsonl/run.sh", "examples/ksn_offline/run_ksn.sh"):
        assert subprocess.run(["bash", "-n", str(ROOT / script)]).returncode == 0


# ------------------------------------------------------------------------------------------------ browser

def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is not installed, so the report page cannot be checked in a browser: "
                "`bash scripts/test.sh` (the README's test command) installs it, or run `apt-get install -y chromium`")


def _run_chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    base = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=180)


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line]


@pytest.mark.slow
def test_page_in_headless_chromium(ksn_run, tmp_path):
    """The gallery filter preset from the address (#q=...) hides one of the two problems; no console errors;
    the screenshot is a real rendering."""
    url = (ksn_run / "report" / "index.html").resolve().as_uri() + "#q=sh-integer-02"
    dom = _run_chromium(["--dump-dom", url], tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = _parse(dom.stdout)
    assert page.find("table", **{"data-table": "ksn_leaderboard"}) and page.find("input", id="hist-search")
    assert len(page.find("figure", class_="hist-item")) == 2
    hidden = page.find("figure", class_="hidden")
    assert [h["data-id"] for h in hidden] == ["sh-integer-01"]
    assert page.text_by_id["hist-count"] == "1 of 2 shown"
    # headless Chromium logs every console message (console.error included) as an INFO:CONSOLE line: the only
    # one allowed is the page's own ready line
    console = _console(dom.stderr)
    assert len(console) == 1 and "ub-report ready: 1 of 2 histograms shown" in console[0], dom.stderr[-3000:]

    shot = tmp_path / "shot.png"
    res = _run_chromium([f"--screenshot={shot}", "--window-size=1200,1500", url], tmp_path)
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    assert [c for c in _console(res.stderr) if "ub-report ready" not in c] == []
    import matplotlib.image as mpimg

    pixels = mpimg.imread(str(shot))
    assert pixels.shape[:2] == (1500, 1200)
    # a blank page is one colour; the report has text, tables and plots: many distinct grey levels, real spread
    grey = pixels[..., :3].mean(axis=2)
    assert grey.std() > 0.05 and len({round(float(v), 2) for v in grey[::7, ::7].ravel()}) > 20
    assert math.isclose(float(grey.max()), 1.0)  # white background


def test_console_check_sees_a_broken_page(ksn_run, tmp_path):
    """The console assertion above is not vacuous: a report whose curve PNG went missing, and a page with a
    script error, both leave console lines."""
    copy = tmp_path / "report"
    shutil.copytree(ksn_run / "report", copy)
    (copy / "ksn_curve.png").unlink()
    res = _run_chromium(["--dump-dom", (copy / "index.html").as_uri()], tmp_path)
    console = "\n".join(_console(res.stderr))
    assert "ub-report: 1 figure(s) failed to load: ksn_curve.png" in console, res.stderr[-3000:]
    page = tmp_path / "bad.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    res = _run_chromium(["--dump-dom", page.as_uri()], tmp_path)
    assert "Uncaught ReferenceError" in "\n".join(_console(res.stderr))


def test_hostile_payloads_do_not_crash(tmp_path):
    """Garbage where numbers and lists belong: metrics become blanks, figures that cannot be drawn are counted."""
    out = tmp_path / "lm"
    out.mkdir()
    lines = [
        {"doc_id": 0, "doc": {"id": "x1", "category": "colors", "options": ["a", "b"], "probabilities": None},
         "metrics": ["pm", "wd", "re"], "pm": "lots", "wd": None, "re": [1, 2], "predicted": [0.3, 0.7],
         "option_mass": "nope", "filter": "none"},
        {"doc_id": 1, "doc": "not a dict", "metrics": ["ks@100", "wdz"], "ks@100": 1.0, "wdz": "inf?",
         "values": ["a", None, 3.5], "filter": "none"},
        {"doc_id": 2, "doc": {"id": "i1", "options": ["1", "2"], "probabilities": [0.5, 0.5]},
         "metrics": ["chebyshev"], "chebyshev": 0.1, "predicted": [0.2, 0.8, 0.1], "filter": "none"},
    ]
    (out / "samples_ub_mixed_2026-01-01T00-00-00.000001.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    res = build_report([out], tmp_path / "rep")
    assert (tmp_path / "rep" / "index.html").is_file()
    cal = _rows(res, "calibration_leaderboard")[("lm", "lm-eval")]
    assert cal["pm"] is None and cal["wd"] is None and cal["items"] == 1
    assert _rows(res, "ksn_leaderboard")[("lm", "lm-eval")]["ks@100"] == 1.0
    # the heatmap needs the ideal probabilities, which are None here: that figure is skipped and counted
    assert [(s.path.split(" for ")[0], s.reason.split(" (")[0]) for s in res.table.skips] == [
        ("calibration heatmap", "not drawn")]
    assert "calibration heatmap for" in (tmp_path / "rep" / "summary.md").read_text()


def test_malformed_files_are_counted_skips_and_one_bad_item_spares_the_rest(tmp_path):
    """Shapes a results/samples file must not have, and one hostile item among good ones: the command still
    writes the report, every bad input is one counted skip, and the good items' figures are drawn."""
    stamp = "2026-01-01T00-00-00.000001"
    for name, results in (("cfg", {"results": {}, "config": "x"}), ("lst", {"results": [1, 2], "config": {}}),
                          ("deep", None)):
        d = tmp_path / "in" / name
        d.mkdir(parents=True)
        text = "[" * 100_000 + "]" * 100_000 if results is None else json.dumps(results)
        (d / f"results_{stamp}.json").write_text(text)
        (d / f"samples_ub_calibration_colors_{stamp}.jsonl").write_text("\n".join(json.dumps(x) for x in [
            {"doc_id": 0, "doc": {"id": "good", "category": "colors", "options": ["red", "blue"],
                                  "probabilities": [0.3, 0.7]}, "pm": 1.0, "wd": 0.0, "re": 0.0,
             "behaviour_calibrated": 1.0, "predicted": [0.3, 0.7], "option_mass": [0.3, 0.7], "filter": "none"},
            {"doc_id": 1, "doc": {"id": "bad", "category": "colors", "options": ["red", "green"],
                                  "probabilities": [0.5, 0.5]}, "pm": 1.0, "wd": 0.0, "re": 0.0,
             "predicted": [0.5, 0.5], "option_mass": [0.5, 0.5], "filter": "none", "metrics": [{"x": 1}]},
            {"doc_id": 2, "doc": {"id": "k", "category": "shuffling"}, "ks@100": -1, "ks@1": 1e308,
             "filter": "none"},
        ]) + "\n" + "[" * 100_000 + "\n")
    res = build_report([tmp_path / "in"], tmp_path / "rep")
    assert (tmp_path / "rep" / "index.html").is_file()
    reasons = " | ".join(f"{s.path}: {s.reason}" for s in res.table.skips)
    assert "deep/results_" in reasons and reasons.count("bad JSON line") == 3, reasons
    assert len(list((tmp_path / "rep").rglob("heatmap_*.png"))) == 3  # one per model, the good item drawn
    ks = _rows(res, "ksn_leaderboard")
    assert all(r["ks@100"] is None for r in ks.values())  # -1 is no pass flag: left out, not a crash


# ------------------------------------------------------------------------------------------ large logs

_LOAD_INPUTS = """
from ub_core.report import load_inputs
import inspect_ai.log  # imported before the baseline, as load_inputs imports it anyway
base = peak_mb()
table = load_inputs(sys.argv[1:])
print(json.dumps({"grew_mb": peak_mb() - base, "records": len(table.records),
                  "skips": [[s.path, s.reason] for s in table.skips]}))
"""


def _load_in_subprocess(*paths: Path, env: dict | None = None) -> dict:
    """load_inputs in a fresh interpreter: how far its peak resident memory grew past the imports."""
    return run_measured(_LOAD_INPUTS, *map(str, paths), env=env)


def test_eval_logs_are_read_sample_by_sample(ksn_run, monkeypatch):
    """The reader asks Inspect for an .eval log's header only and streams its samples: it never loads a whole log."""
    import inspect_ai.log

    calls = []
    real = inspect_ai.log.read_eval_log
    monkeypatch.setattr(inspect_ai.log, "read_eval_log", lambda *a, **k: calls.append(k) or real(*a, **k))
    table = load_inputs([ksn_run / "inspect_logs"])
    assert table.skips == [] and len(table.records) == 4  # 2 models x 2 problems
    assert all(len(r.payload["values"]) == 100 for r in table)
    assert calls and all(k.get("header_only") is True for k in calls), calls


@pytest.mark.slow
def test_large_eval_log_memory_stays_bounded(ksn_run, tmp_path):
    """An .eval log of 120 samples carrying 1 MB each of fields the report never reads (120 MB inflated): reading it
    grows peak memory by far less than the content, since samples come one at a time without those fields."""
    from inspect_ai.log import read_eval_log, write_eval_log

    src = next(p for p in (ksn_run / "inspect_logs").glob("*.eval")
               if read_eval_log(str(p), header_only=True).eval.model == "ub/oracle")
    elog = read_eval_log(str(src))
    first = elog.samples[0]
    samples = []
    for i in range(120):
        s = first.model_copy(deep=True)
        s.id = f"{first.id}-copy{i:03d}"
        s.store = {"blob": chr(65 + i % 26) * 2**20}
        samples.append(s)
    elog.samples = samples
    elog.eval.dataset.sample_ids = [s.id for s in samples]
    elog.eval.dataset.samples = len(samples)
    big = tmp_path / "big.eval"
    write_eval_log(elog, str(big))
    got = _load_in_subprocess(big)
    assert got["skips"] == [] and got["records"] == 120
    # 120 MB of store strings would be at least 120 MB resident (more as Python objects) if the log were read whole
    assert got["grew_mb"] < 60, got


@pytest.mark.slow
def test_oversized_json_log_is_a_named_skip(tmp_path):
    """A 150 MB Inspect-looking .json log (sparse, written in an instant) is one named skip, read no further:
    Inspect parses a .json log whole at ~70x its size, which is how a 143 MB log grew to 10 GB."""
    big = tmp_path / "huge.json"
    with big.open("w") as fh:
        fh.write('{"version": 2, "status": "success", "eval": {"task": "ksn", "model": "m"}, "samples": [')
        fh.truncate(150 * 2**20)
    got = _load_in_subprocess(big)
    assert got["records"] == 0 and len(got["skips"]) == 1
    assert got["skips"][0][1].startswith("too large (150 MB > 64 MB cap for Inspect .json logs"), got
    assert "inspect log convert" in got["skips"][0][1]
    assert got["grew_mb"] < 30, got


def test_json_log_cap_on_a_real_log(ksn_run, tmp_path, monkeypatch):
    """The cap's mechanism on a real Inspect .json log: read under the cap, one named skip over it."""
    from inspect_ai.log import read_eval_log, write_eval_log

    src = next((ksn_run / "inspect_logs").glob("*.eval"))
    as_json = tmp_path / "log.json"
    write_eval_log(read_eval_log(str(src)), str(as_json), format="json")
    size_mb = as_json.stat().st_size / 2**20
    monkeypatch.setenv("UB_REPORT_JSON_MAX_MB", str(size_mb * 1.01))
    under = load_inputs([as_json])
    assert under.skips == [] and len(under.records) == 2
    monkeypatch.setenv("UB_REPORT_JSON_MAX_MB", str(size_mb * 0.99))
    over = load_inputs([as_json])
    assert over.records == [] and [s.reason.split(" (")[0] for s in over.skips] == ["too large"]


# ----------------------------------------------------------------------------------------- summary.md

def test_summary_md_escapes_html_and_table_pipes(tmp_path):
    """A model name holding <script>, a pipe, an ampersand and a line break stays inert text in one table cell."""
    from ub_core.report.summary import md_text

    stamp = "2026-01-01T00-00-00.000001"
    d = tmp_path / "lm"
    d.mkdir()
    evil = "<script>alert(1)</script>|a&b\nc"
    (d / f"results_{stamp}.json").write_text(json.dumps(
        {"results": {}, "config": {"model": "hf", "model_args": {"pretrained": evil}}}))
    (d / f"samples_ub_ksn_{stamp}.jsonl").write_text(json.dumps(
        {"doc_id": 0, "doc": {"id": "sh-integer-01", "category": "shuffling"}, "metrics": ["ks@100"],
         "ks@100": 1.0, "filter": "none"}) + "\n")
    build_report([d], tmp_path / "rep")
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "<script>" not in md and "<" not in md.replace("&lt;", "")
    assert "| hf/&lt;script&gt;alert(1)&lt;/script&gt;\\|a&amp;b c | lm-eval |" in md
    for block in re.findall(r"(?:^\|.*\|$\n?)+", md, re.M):  # every row of a table has the header's cell count
        rows = block.strip().splitlines()
        counts = {len(re.split(r"(?<!\\)\|", row)) for row in rows}
        assert len(counts) == 1, rows
    assert md_text("x < 1 & y > 2 | z") == "x &lt; 1 &amp; y &gt; 2 \\| z"
