"""Loading the officially released UnpredictaBench files (fixtures written here in the released schema)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ub_core.release_tools.official import OfficialDataError, load_official, normalise_category

ROWS = [
    {"id": 0, "uid": "u-norm", "category": "Text Explicit", "subcategory": "normal", "prompt_title": "Normal",
     "prompt_text": "Sample one value from a normal distribution with mean 5 and sd 2. Put it in {{value}}."},
    {"id": 1, "uid": "u-pois", "category": "Code Implicit", "subcategory": "poisson", "prompt_title": "Poisson",
     "prompt_text": "What could this program print? ... {{value}}"},
    {"id": 2, "uid": "u-rw", "category": "RealWorld", "subcategory": "distributed systems", "prompt_title": "KV",
     "prompt_text": "Which replica answers first: A, B or C? Reply in {{value}}."},
    {"id": 3, "uid": "u-sh", "category": "Shuffling", "subcategory": "integer", "prompt_title": "Shuffle",
     "prompt_text": "Shuffle [1, 2, 3] and reply with the list in {{value}}."},
]


def _truth():
    rng = np.random.default_rng(0)
    perms = [list(map(int, rng.permutation([1, 2, 3]))) for _ in range(600)]
    return {
        "u-norm": rng.normal(5, 2, 1000).tolist(),
        "u-pois": rng.poisson(4, 1000).tolist(),
        "u-rw": rng.choice(["A", "B", "C"], 900).tolist(),
        "u-sh": perms,
    }


@pytest.fixture()
def release(tmp_path):
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    (tmp_path / "questions.json").write_text(json.dumps(ROWS))
    gt = tmp_path / "ground_truth_values.json"
    gt.write_text(json.dumps(_truth()))
    return tmp_path


def _check(problems):
    by = {p.id: p for p in problems}
    assert set(by) == {"u-norm", "u-pois", "u-rw", "u-sh"}
    assert by["u-norm"].support == "continuous" and by["u-norm"].category == "text_explicit"
    assert by["u-pois"].support == "discrete" and by["u-pois"].answer_format == "integer"
    assert by["u-rw"].support == "categorical" and by["u-rw"].options == ("A", "B", "C")
    assert by["u-rw"].category == "real_world" and by["u-rw"].subcategory == "distributed systems"
    sh = by["u-sh"]
    assert sh.support == "permutation" and sh.options == ("1", "2", "3")
    # the published prompt is used verbatim, no instruction appended
    assert by["u-norm"].full_prompt == ROWS[0]["prompt_text"]
    # truth() is the released reference sample
    assert np.allclose(by["u-norm"].truth(), _truth()["u-norm"])
    z1 = sh.truth()
    assert set(np.unique(z1)) <= {0.0, 0.5, 1.0} and z1.size == 600
    # a reply is parsed in the released item labels: [3, 1, 2] -> first item has 2 smaller after it -> Z1 = 1
    assert sh.parse("{3, 1, 2}").value == 1.0
    assert by["u-rw"].parse("{B}").value == 1.0


def test_load_jsonl_and_json(release):
    _check(load_official(release / "questions.jsonl", release / "ground_truth_values.json"))
    _check(load_official(release / "questions.json", release / "ground_truth_values.json"))


def test_load_parquet(release):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(ROWS), release / "questions.parquet")
    _check(load_official(release / "questions.parquet", release / "ground_truth_values.json"))


def test_load_through_datasets_folder(release, tmp_path_factory):
    """The hub-id code path (datasets.load_dataset) on a local dataset folder."""
    folder = tmp_path_factory.mktemp("hf_dataset")
    (folder / "train.jsonl").write_text((release / "questions.jsonl").read_text())
    _check(load_official(str(folder), release / "ground_truth_values.json", split="train"))


def test_category_filter(release):
    got = load_official(release / "questions.jsonl", release / "ground_truth_values.json",
                        categories=["Shuffling"])
    assert [p.id for p in got] == ["u-sh"]


@pytest.mark.parametrize("mutate,needle", [
    (lambda rows, gt: rows[0].pop("prompt_text"), "missing column(s) prompt_text"),
    (lambda rows, gt: gt.pop("u-pois"), "no ground truth for uid 'u-pois'"),
    (lambda rows, gt: gt.__setitem__("u-norm", [1.0, "x"]), "mix types"),
    (lambda rows, gt: gt.__setitem__("u-norm", []), "non-empty list"),
])
def test_bad_release_files_give_one_line_errors(tmp_path, mutate, needle):
    rows, gt = json.loads(json.dumps(ROWS)), _truth()
    mutate(rows, gt)
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    with pytest.raises(OfficialDataError) as exc:
        load_official(tmp_path / "q.jsonl", tmp_path / "gt.json")
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_unreadable_inputs(tmp_path):
    (tmp_path / "q.jsonl").write_text('{"uid": "a"\n')
    (tmp_path / "gt.json").write_text("{}")
    with pytest.raises(OfficialDataError, match="not valid JSON"):
        load_official(tmp_path / "q.jsonl", tmp_path / "gt.json")
    with pytest.raises(OfficialDataError, match="cannot load dataset"):
        load_official(tmp_path / "does-not-exist", tmp_path / "gt.json")


def test_category_names():
    assert normalise_category("Text Explicit") == "text_explicit"
    assert normalise_category("RealWorld") == "real_world"
    assert normalise_category("Code-Implicit") == "code_implicit"
    assert normalise_category("Something New") == "something_new"


def test_ub_score_against_release(release, tmp_path):
    rng = np.random.default_rng(1)
    lines = [{"id": "u-norm", "values": rng.normal(5, 2, 100).tolist()},
             {"id": "u-rw", "outputs": ["{A}", "{B}", "{C}"] * 33 + ["{D}"]},
             {"id": "u-sh", "outputs": ["{1, 2, 3}", "{3, 2, 1}", "{2, 3, 1}"] * 34}]
    samples = tmp_path / "s.jsonl"
    samples.write_text("\n".join(json.dumps(x) for x in lines))
    out = subprocess.run([sys.executable, "-m", "ub_core.cli", "score", "--samples", str(samples), "--dataset",
                          str(release / "questions.jsonl"), "--ground-truth", str(release / "ground_truth_values.json"),
                          "--json"], capture_output=True, text=True, check=True)
    rep = json.loads(out.stdout)
    rows = {r["id"]: r for r in rep["problems"]}
    assert rows["u-norm"]["n_valid"] == 100 and rows["u-norm"]["ks@100"] == 1.0
    assert rows["u-rw"]["n_failed"] == 1  # "{D}" is not an option


# ----------------------------------------------------------------------------------------------------- codes, bad input

def _write_release(tmp_path, rows, gt, gt_text=None):
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (tmp_path / "gt.json").write_text(gt_text if gt_text is not None else json.dumps(gt))
    return tmp_path / "q.jsonl", tmp_path / "gt.json"


def _row(uid, category="RealWorld"):
    return {"id": 9, "uid": uid, "category": category, "prompt_text": "Pick one and reply in {{value}}."}


def test_case_variant_labels_score_an_exact_truth_sample_as_a_pass(tmp_path, caplog):
    """`red` and `Red` in the truth are one option: replies copying the truth read back to the truth's codes."""
    from ub_core.ksn_scoring import score_outputs

    labels = np.random.default_rng(5).choice(["blue", "red", "Red", "RED ", "green", "Green"], 400).tolist()
    q, gt = _write_release(tmp_path, [_row("u-case")], {"u-case": labels})
    with caplog.at_level("WARNING", logger="ub_core.release_tools.official"):
        (p,) = load_official(q, gt)
    first_seen = {}
    for v in labels:
        first_seen.setdefault(v.strip().casefold(), v.strip())
    assert p.options == tuple(first_seen[k] for k in ("blue", "green", "red"))
    assert "u-case" in caplog.text and "case or spacing" in caplog.text
    truth = p.truth()
    codes = {v.strip().casefold(): set() for v in labels}
    for v, c in zip(labels, truth):
        codes[v.strip().casefold()].add(c)
    assert all(len(c) == 1 for c in codes.values())
    replies = ["{" + v + "}" for v in labels[:100]]
    assert [p.parse(r).value for r in replies] == truth[:100].tolist()
    res = score_outputs(p, replies, ns=(100,), wdz_resamples=99)
    assert res["n_failed"] == 0 and res["ks@100"] == 1.0


_HASHSEED_SCRIPT = """
import json, sys
from ub_core.release_tools.official import official_problem
row = {"uid": "u", "category": "RealWorld", "prompt_text": "x"}
labels = ["b", "B", "a", "A", "c", "C", "d", "D", "e", "E", "f", "F", "g", "G"] * 3
cat = official_problem(row, labels)
perms = [["Pear", "apple", "Fig", "kiwi"], ["fig", "Apple", "pear", "KIWI"], ["kiwi", "pear", "apple", "fig"],
         ["APPLE", "Kiwi", "FIG", "Pear"]]
sh = official_problem(dict(row, uid="s", category="Shuffling"), perms)
print(json.dumps([list(cat.options), cat.truth().tolist(), list(sh.options), sh.truth().tolist()]))
"""


@pytest.mark.slow
def test_label_codes_do_not_depend_on_the_hash_seed(tmp_path):
    import os

    outs = set()
    for seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", _HASHSEED_SCRIPT], capture_output=True, text=True, env=env,
                             check=True)
        outs.add(out.stdout.strip())
    assert len(outs) == 1
    cat_options, cat_codes, sh_items, z1 = json.loads(outs.pop())
    assert [o.casefold() for o in cat_options] == list("abcdefg") and len(set(cat_codes)) == 7
    assert [i.casefold() for i in sh_items] == ["apple", "fig", "kiwi", "pear"]
    # Z1 in the sorted item order: Pear first -> 3 smaller after it of 3; fig -> 1 of 3; kiwi -> 2 of 3; APPLE -> 0
    assert z1 == [1.0, 1 / 3, 2 / 3, 0.0]


@pytest.mark.parametrize("labels,needle", [
    (["A", "Option A", "B"] * 5, "cannot be told apart"),
    (["yes", "yes.", "no"] * 5, "cannot be told apart"),
])
def test_labels_a_reply_cannot_tell_apart_are_refused(tmp_path, labels, needle):
    q, gt = _write_release(tmp_path, [_row("u-amb")], {"u-amb": labels})
    with pytest.raises(OfficialDataError) as exc:
        load_official(q, gt)
    msg = str(exc.value)
    assert needle in msg and "'u-amb'" in msg and str(gt) in msg and "\n" not in msg


@pytest.mark.parametrize("gt_text,needle", [
    ('{"u-x": [1.0, NaN, 2.0]}', "ground-truth value 1 is not a finite number (nan)"),
    ('{"u-x": [1.0, Infinity]}', "ground-truth value 1 is not a finite number (inf)"),
    ('{"u-x": [1.0, null, 2.0]}', "ground-truth value 1 is null"),
    ('{"u-x": [true, false]}', "ground-truth value 0 is a boolean"),
    ('{"u-x": ["a", " "]}', "ground-truth value 1 is an empty string"),
    ('{"u-x": [[1, 2], [2, null]]}', "item 1 of ground-truth value 1 is null"),
    ('{"u-x": [[1, 2], [2, NaN]]}', "item 1 of ground-truth value 1 is not a finite number"),
    ('{"u-x": [[1, 2], []]}', "ground-truth value 1 is an empty list"),
    ('{"u-x": [[1, 2, 3], [3, 2, 1], [1, 2]]}', "shuffle 2 has 2 items, shuffle 0 has 3"),
    ('{"u-x": [[1, 2, 3], [3, 2, 4]]}', "shuffle 1 has item '4', which shuffle 0 lacks"),
    ('{"u-x": [[1, 2, 3], [3, 3, 1]]}', "shuffle 1 repeats item '3'"),
    ('{"u-x": [["a", "b"], ["B", "b"]]}', "shuffle 1 repeats item 'b' (as 'B')"),
    ('{"u-x": [1.5, {"a": 1}]}', "ground-truth value 1 is an object"),
    ('{"u-x": [1, "a"]}', "mix types (int, str)"),
    ('{"u-x": [[1, 2], [2, [1]]]}', "item 1 of ground-truth value 1 is a list"),
    ('{"u-x": [1, 2], "u-x": [3, 4]}', "duplicate uid 'u-x'"),
    ('[{"uid": "u-x", "ground_truth_values": [1]}, {"uid": "u-x", "ground_truth_values": [2]}]',
     "duplicate uid 'u-x' (rows 0 and 1)"),
    ('{"u-x": {"values": [1], "values": [2]}}', "key 'values' given twice"),
])
def test_bad_truth_names_uid_and_file_in_one_line(tmp_path, gt_text, needle):
    q, gt = _write_release(tmp_path, [_row("u-x")], None, gt_text=gt_text)
    with pytest.raises(OfficialDataError) as exc:
        load_official(q, gt)
    msg = str(exc.value)
    assert needle in msg, msg
    assert "u-x" in msg and str(gt) in msg and "\n" not in msg


def test_duplicate_question_uid_is_refused(tmp_path):
    q, gt = _write_release(tmp_path, [_row("u-a"), _row("u-b"), _row("u-a")], {"u-a": [1, 2], "u-b": [3]})
    with pytest.raises(OfficialDataError, match=r"duplicate uid 'u-a' \(rows 0 and 2\)") as exc:
        load_official(q, gt)
    assert str(q) in str(exc.value)


def test_non_utf8_files_are_named(tmp_path):
    q, gt = _write_release(tmp_path, [_row("u-a")], {"u-a": [1, 2]})
    good_gt = gt.read_bytes()
    gt.write_bytes(b'{"u-a": ["caf\xe9"]}')
    with pytest.raises(OfficialDataError) as exc:
        load_official(q, gt)
    assert str(gt) in str(exc.value) and "not UTF-8" in str(exc.value) and "0xe9" in str(exc.value)
    gt.write_bytes(good_gt)
    q.write_bytes(b'{"uid": "u-a", "category": "x", "prompt_text": "caf\xe9"}\n')
    with pytest.raises(OfficialDataError) as exc:
        load_official(q, gt)
    assert str(q) in str(exc.value) and "not UTF-8" in str(exc.value) and "\n" not in str(exc.value)


def test_release_layout_of_ground_truth_rows(release, tmp_path):
    """The published ground_truth_values.json is a list of {"uid", "ground_truth_values"} rows."""
    rows = [{"uid": uid, "ground_truth_values": vals} for uid, vals in _truth().items()]
    (tmp_path / "gt_rows.json").write_text(json.dumps(rows))
    _check(load_official(release / "questions.jsonl", tmp_path / "gt_rows.json"))


def test_shuffle_items_compare_as_the_parser_does(tmp_path):
    """Items that the permutation parser treats as equal (case, 2.50 vs 2.5) are one item, not two."""
    perms = [["Apple", "2.5", "pear"], ["pear", "apple", "2.50"], ["2.5", "PEAR", "apple"]]
    q, gt = _write_release(tmp_path, [_row("u-sh", "Shuffling")], {"u-sh": perms})
    (p,) = load_official(q, gt)
    assert p.options == ("2.5", "Apple", "pear")
    assert p.truth().tolist() == [0.5, 1.0, 0.0]
    assert [p.parse("{" + ", ".join(x) + "}").value for x in perms] == p.truth().tolist()


# ------------------------------------------------------------------------------------------------------- release layout

RW_MAP = {
    "shuffling_separated_by_new_line": {"uids:": [{"value": "rw-shuf", "metadata": {"number_of_lines": 3}}],
                                        "how_to_handle": "shuffling"},
    "selection_separated_by_new_line": {"uids:": [
        {"value": "rw-lines", "metadata": {"min_lines": 0, "max_lines": 2, "possible_outcomes": 4,
                                           "mapping": {"(no output)": 1, "A\n1": 2, "1\nA": 3, "B\n2": 4}}}]},
    "single_item_selection": {"uids:": [
        {"value": "rw-pick", "metadata": {"type": "string", "mapping": {"A": 1, "B": 2, "C": 3}}},
        {"value": "rw-num", "metadata": {"type": "number", "mapping": None}}]},
}
FOLDERS = {
    "textual_explicit_concentrated_gpt-5.4": {"te-1": "normal", "te-2": "normal"},
    "code_implicit_spread_out_gpt-5.4": {"ci-1": "poisson"},
    "textual_multimodal_explicit_spread_out_gpt-5.4": {"mm-1": "normal"},
    "realworld_human": {"rw-shuf": "shuf_lines", "rw-lines": "lines", "rw-pick": "pick", "rw-num": "poisson"},
    "shuffling_human": {"sh-1": "perm", "sh-2": "perm"},
}


def _release_values(kind, rng):
    n = 2000
    if kind == "normal":
        return rng.normal(0, 1, n).tolist()
    if kind == "poisson":
        return rng.poisson(3, n).tolist()
    if kind == "pick":
        return rng.choice(["A", "B"], n).tolist()  # "C" is possible but never drawn
    if kind == "lines":
        return rng.choice(["", "A\n1", "1\nA"], n).tolist()
    if kind == "shuf_lines":
        return ["\n".join(rng.permutation(["C", "A", "B"])) for _ in range(n)]
    return [list(map(int, rng.permutation([3, 2, 1]))) for _ in range(n)]


def _write_layout(root, folders=FOLDERS, mapping=RW_MAP):
    """A release in the published layout: ground_truth_values/<folder>/ground_truth_values.json (lists of
    {uid, ground_truth_values} records), realworld_mapping.json at the root, questions as JSONL."""
    rng = np.random.default_rng(7)
    rows = []
    for folder, uids in folders.items():
        recs = [{"uid": u, "ground_truth_values": _release_values(k, rng)} for u, k in uids.items()]
        d = root / "ground_truth_values" / folder
        d.mkdir(parents=True, exist_ok=True)
        (d / "ground_truth_values.json").write_text(json.dumps(recs))
        rows += [{"id": len(rows), "uid": u, "category": "whatever the hub says", "subcategory": k,
                  "prompt_title": u, "prompt_text": f"Question {u}: reply in {{{{value}}}}."} for u, k in uids.items()]
    if mapping is not None:
        (root / "realworld_mapping.json").write_text(json.dumps(mapping))
    (root / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    return root / "questions.jsonl"


def test_release_folders_map_to_categories_and_regimes():
    from ub_core.release_tools.official import release_folder_info

    assert release_folder_info("textual_explicit_concentrated_gpt-5.4") == {
        "category": "text_explicit", "regime": "concentrated", "modality": "unimodal", "source": "gpt-5.4"}
    got = {f: (i["category"], i["regime"], i["modality"]) for f in FOLDERS
           for i in [release_folder_info(f)]}
    assert got == {"textual_explicit_concentrated_gpt-5.4": ("text_explicit", "concentrated", "unimodal"),
                   "code_implicit_spread_out_gpt-5.4": ("code_implicit", "spread", "unimodal"),
                   "textual_multimodal_explicit_spread_out_gpt-5.4": ("multimodal", "spread", "multimodal"),
                   "realworld_human": ("real_world", "none", "unimodal"),
                   "shuffling_human": ("shuffling", "none", "unimodal")}


@pytest.mark.parametrize("where", ["root", "values_dir"])
def test_release_layout_loads_with_folders_and_answer_types(tmp_path, where):
    q = _write_layout(tmp_path)
    gt = tmp_path if where == "root" else tmp_path / "ground_truth_values"
    by = {p.id: p for p in load_official(q, gt)}
    assert len(by) == 10
    assert (by["te-1"].category, by["te-1"].regime) == ("text_explicit", "concentrated")
    assert (by["ci-1"].category, by["ci-1"].regime, by["ci-1"].support) == ("code_implicit", "spread", "discrete")
    assert by["mm-1"].category == "multimodal" and by["mm-1"].modality == "multimodal"
    assert by["sh-1"].category == "shuffling" and by["sh-1"].support == "permutation"
    assert by["te-1"].metadata["release_folder"] == "textual_explicit_concentrated_gpt-5.4"
    # single item selection: the mapping's outcomes are the options, also one never drawn
    pick = by["rw-pick"]
    assert pick.category == "real_world" and pick.support == "categorical" and pick.options == ("A", "B", "C")
    assert pick.metadata["answer_type"] == "single_item_selection" and pick.parse("{C}").value == 2.0
    # numeric single item (mapping null) stays a number
    assert by["rw-num"].support == "discrete"
    # selection separated by new lines: outcomes are printouts; the empty draw is "(no output)"
    lines = by["rw-lines"]
    assert lines.support == "categorical" and len(lines.options) == 4
    code = {o: i for i, o in enumerate(lines.options)}
    assert lines.parse("A\n1").value == code["A\n1"] and lines.parse("1\nA").value == code["1\nA"]
    assert lines.parse("(no output)").value == code["(no output)"]
    truth_codes = set(lines.truth().tolist())
    assert truth_codes == {code["(no output)"], code["A\n1"], code["1\nA"]}
    # shuffling separated by new lines: each printout's lines are the shuffled items
    sh = by["rw-shuf"]
    assert sh.support == "permutation" and sh.options == ("A", "B", "C")
    assert sh.parse("C\nA\nB").value == 1.0 and sh.parse("A\nB\nC").value == 0.0
    z1 = sh.truth()
    assert z1.size == 2000 and set(np.unique(z1)) == {0.0, 0.5, 1.0}


def test_release_layout_category_filter_uses_folder(tmp_path):
    q = _write_layout(tmp_path)
    got = load_official(q, tmp_path, categories=["Real World"])
    assert sorted(p.id for p in got) == ["rw-lines", "rw-num", "rw-pick", "rw-shuf"]


@pytest.mark.parametrize("mutate,needle", [
    (lambda m, f: f["shuffling_human"].__setitem__("te-1", "perm"), "'te-1' is in both"),
    (lambda m, f: m.__setitem__("free_text", {"uids": []}), "unknown answer type 'free_text'"),
    (lambda m, f: m["single_item_selection"]["uids:"][0]["metadata"].__setitem__("mapping", {"A": 1}),
     "value 'B' is not an outcome listed in the answer mapping"),
    (lambda m, f: m["shuffling_separated_by_new_line"]["uids:"][0]["metadata"].__setitem__("number_of_lines", 4),
     "shuffle 0 has 3 lines, the answer mapping says 4"),
    (lambda m, f: m["selection_separated_by_new_line"]["uids:"][0]["metadata"]["mapping"].pop("(no output)"),
     "is an empty string"),
])
def test_release_layout_errors_are_one_line(tmp_path, mutate, needle):
    mapping, folders = json.loads(json.dumps(RW_MAP)), json.loads(json.dumps(FOLDERS))
    mutate(mapping, folders)
    q = _write_layout(tmp_path, folders, mapping)
    with pytest.raises(OfficialDataError) as exc:
        load_official(q, tmp_path)
    assert needle in str(exc.value) and "\n" not in str(exc.value), str(exc.value)


def test_release_layout_without_mapping_infers_support(tmp_path):
    folders = {k: v for k, v in FOLDERS.items() if k != "realworld_human"}
    q = _write_layout(tmp_path, folders, mapping=None)
    by = {p.id: p for p in load_official(q, tmp_path)}
    assert len(by) == 6 and by["sh-2"].support == "permutation" and by["te-2"].support == "continuous"


def test_score_and_inspect_take_a_release_folder(tmp_path):
    q = _write_layout(tmp_path)
    lines = [{"id": "rw-pick", "outputs": ["{A}", "{B}"] * 50},
             {"id": "rw-shuf", "outputs": ["C\nA\nB", "A\nB\nC", "B\nC\nA"] * 34}]
    samples = tmp_path / "s.jsonl"
    samples.write_text("\n".join(json.dumps(x) for x in lines))
    out = subprocess.run([sys.executable, "-m", "ub_core.cli", "score", "--samples", str(samples), "--dataset",
                          str(q), "--ground-truth", str(tmp_path), "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in json.loads(out.stdout)["problems"]}
    assert rows["rw-pick"]["n_valid"] == 100 and rows["rw-shuf"]["n_valid"] == 102
    assert rows["rw-shuf"]["n_failed"] == 0
    from ub_inspect.ksn.ksn import load_problems

    got = load_problems(str(q), str(tmp_path / "ground_truth_values"), "train", ["shuffling"])
    assert sorted(p.id for p in got) == ["sh-1", "sh-2"]


def test_truth_built_by_ub_official_truth_loads(tmp_path):
    """`ub official truth --out DIR` writes what `-T ground_truth=DIR` / `--ground-truth DIR` reads."""
    if sys.platform != "linux":
        pytest.skip("the runner uses Linux rlimits")
    codes = tmp_path / "release" / "ground_truth_codes"
    progs = {("textual_explicit_concentrated_gpt-5.4", "te-1"):
             "import random\nprint([random.gauss(0, 1) for _ in range(10000)])\n",
             ("realworld_human", "rw-pick"): "import random\nprint([random.choice('AB') for _ in range(10000)])\n",
             ("realworld_human", "rw-shuf"):
             "import random\nprint(['\\n'.join(random.sample('CAB', 3)) for _ in range(10000)])\n"}
    for (folder, uid), code in progs.items():
        (codes / folder).mkdir(parents=True, exist_ok=True)
        (codes / folder / f"{uid}.py").write_text(code)
    (tmp_path / "release" / "realworld_mapping.json").write_text(json.dumps(
        {"single_item_selection": RW_MAP["single_item_selection"],
         "shuffling_separated_by_new_line": RW_MAP["shuffling_separated_by_new_line"]}))
    from ub_core.release_tools.official_truth import Limits, build_truth

    s = build_truth(tmp_path / "release", tmp_path / "release" / "ground_truth_values", trust_release_code=True,
                    limits=Limits(wall_s=5, cpu_s=5, memory_mb=1024), progress=False)
    assert s.failed == [] and s.ok == 3
    rows = [{"uid": u, "category": "x", "prompt_text": "reply in {{value}}"} for _, u in progs]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    by = {p.id: p for p in load_official(tmp_path / "q.jsonl", tmp_path / "release")}
    assert by["te-1"].support == "continuous" and by["te-1"].truth().size == 10_000
    assert by["rw-pick"].options == ("A", "B", "C") and by["rw-shuf"].support == "permutation"


def test_deeply_nested_release_json_is_one_line(tmp_path):
    """A ground-truth file nested 100,000 deep is one named error, not a RecursionError."""
    from ub_core.release_tools.official import OfficialDataError, load_ground_truth

    f = tmp_path / "ground_truth_values.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(OfficialDataError, match="ground_truth_values.json: JSON nested too deep"):
        load_ground_truth(f)
