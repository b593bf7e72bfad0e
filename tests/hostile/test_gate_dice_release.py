"""Hostile "Bad Dice Players" release folders through the gate (``ub reproduce dice``): an ``.npz`` whose members
unpack far past what the file weighs, one hostile number among the release's own figures, a NaN a summary would
hide, reference arrays with their hash entries gone or of an odd size, duplicate JSON keys. Each is one named
gap and the rest of the run intact, never a traceback. Those tests edit the release after it is written, so they
read it behind the checksums (``manifest=None``); the checksums' own tests close the file: an edited or added file
is a gap whatever the release's sidecar says, and the manifest of the published release ships with ub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from support.dice_release import manifest_file, write_release
from support.truth_runner import ROOT

from ub_core import cli
from ub_core.metrics.dice import DICE_ORDER
from ub_core.reproduce import dice as R


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write_release(tmp_path)


def _npz_bomb(path: Path, unpacked_mb: int, keep: dict | None = None) -> None:
    """An ``.npz`` whose one member is a float64 array of ``unpacked_mb`` MB of zeros, deflated to a few hundred
    KB, written a piece at a time (the test never holds it)."""
    n = unpacked_mb * 2**20 // 8
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = (n,)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for key, arr in (keep or {}).items():
            with zf.open(f"{key}.npy", "w") as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)
        with zf.open("batch/Gaussian.npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array_header_1_0(fh, header)
            piece = bytes(2**22)
            for _ in range(n * 8 // len(piece)):
                fh.write(piece)


def test_an_npz_bomb_is_one_named_gap_in_bounded_memory(release, tmp_path):
    """The cap was on the packed file (32 MB): a 1 MB ``.npz`` unpacking to 400 MB was read whole. Now each
    member is capped on what it unpacks to, and the parent's peak memory stays far under the bomb."""
    refs = dict(np.load(release / f"{R.REFERENCE}.npz"))
    refs.pop("batch/Gaussian")
    path = release / f"{R.REFERENCE}.npz"
    _npz_bomb(path, 400, keep=refs)
    assert path.stat().st_size < 4 * 2**20
    code = ("import json, sys\nfrom ub_core.reproduce.dice import reproduce_dice\n"
            "r = reproduce_dice(sys.argv[1], manifest=None)\n"
            "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0].split()[1]\n"
            "print(json.dumps({'gaps': list(r['gaps']), 'rows': len(r['rows']), 'peak_kb': int(hwm)}))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(release)], capture_output=True, text=True, timeout=120,
                          check=False, env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert any("unpacks to more than" in g and "Gaussian" in g for g in got["gaps"]), got["gaps"]
    assert got["peak_kb"] * 1024 < 300 * 2**20, got["peak_kb"]


@pytest.mark.parametrize("where", ["main", "mcq", "counts"])
@pytest.mark.parametrize("hostile", ["10**400", "NaN", "Infinity", '"0.5"'])
def test_one_hostile_number_is_one_named_gap_and_the_rest_stands(release, where, hostile):
    """10**400 as a p-value of the recomputed table or of the MCQ results, or as an answer count, was a traceback
    and no table; a NaN among the release's p-values was hidden by the ``max`` of the comparison line."""
    raw = hostile if hostile != "10**400" else str(10**400)
    clean = R.reproduce_dice(release, manifest=None)
    if where == "main":
        doc = json.loads((release / R.MAIN_RESULTS).read_text())
        doc["batch"]["Gaussian"]["GPT-4o"]["pval"] = "@@"
        (release / R.MAIN_RESULTS).write_text(json.dumps(doc).replace('"@@"', raw))
    elif where == "mcq":
        doc = json.loads((release / R.MCQ_RESULTS).read_text())
        doc["mcq"]["GPT-4o"]["p_value"] = "@@"
        (release / R.MCQ_RESULTS).write_text(json.dumps(doc).replace('"@@"', raw))
    else:  # Llama-4's row comes from its tally alone
        path = release / R.MCQ_DIR / "llama4" / "answer_statistics.json"
        doc = json.loads(path.read_text())
        doc["distribution"]["B"] = "@@"
        path.write_text(json.dumps(doc).replace('"@@"', raw))
    result = R.reproduce_dice(release, manifest=None)
    text = R.format_report(result)
    gaps = [g for g in result["gaps"] if g not in set(clean["gaps"])]  # the synthetic release misses 9 models
    assert len(gaps) == 1 and result["gaps"].total == clean["gaps"].total + 1, gaps
    assert ("Gaussian" in gaps[0] if where == "main" else "GPT-4o" in gaps[0] if where == "mcq"
            else "llama4" in gaps[0]), gaps[0]
    main_rows = [r for r in result["rows"] if r["table"] == "main"]
    assert len(main_rows) == len([r for r in clean["rows"] if r["table"] == "main"])
    mcq = [r["model"] for r in result["rows"] if r["table"] == "mcq"]
    assert mcq == (["GPT-4o"] if where == "counts" else ["GPT-4o", "Llama-4"])
    cmp_ = result["comparison"]
    if where == "main":
        assert cmp_["main"]["cells"] == clean["comparison"]["main"]["cells"] - 1
        assert "1 release value not a finite number" in text
    if where == "mcq":
        assert cmp_["mcq"]["models"] == clean["comparison"]["mcq"]["models"] - 1


def _edit_gaussian_reference(release, edit_draws, edit_sidecar) -> None:
    """Replace the batch Gaussian reference draws by ``edit_draws(draws)`` and change the release's own sidecar with
    ``edit_sidecar(sidecar, new draws)``: what an edit that also covers its tracks does."""
    refs = dict(np.load(release / f"{R.REFERENCE}.npz"))
    refs["batch/Gaussian"] = edit_draws(refs["batch/Gaussian"])
    np.savez(release / f"{R.REFERENCE}.npz", **refs)
    side = json.loads((release / f"{R.REFERENCE}.json").read_text())
    edit_sidecar(side, refs["batch/Gaussian"])
    (release / f"{R.REFERENCE}.json").write_text(json.dumps(side))


def test_reference_hash_entries_removed_is_a_gap(release):
    """An edited reference whose sidecar entry was deleted passed unchecked (p-values off by up to 0.75)."""
    def drop_entry(side, _):
        del side["references"]["batch"]["Gaussian"]

    _edit_gaussian_reference(release, lambda draws: draws + 3.0, drop_entry)
    result = R.reproduce_dice(release, manifest=None)
    assert any("batch/Gaussian" in g and "no SHA-256" in g for g in result["gaps"]), list(result["gaps"])
    assert not any(r["table"] == "main" and r["protocol"] == "batch" and r["distribution"] == "Gaussian"
                   for r in result["rows"])


def test_an_odd_sized_reference_is_named(release):
    """A one-value reference (its hash entry recomputed to match) was accepted and scored against."""
    import hashlib

    def rehash(side, draws):
        side["references"]["batch"]["Gaussian"]["sha256"] = hashlib.sha256(draws.tobytes()).hexdigest()

    _edit_gaussian_reference(release, lambda draws: np.array([0.5]), rehash)
    result = R.reproduce_dice(release, manifest=None)
    assert any("batch/Gaussian" in g and "1 draw" in g for g in result["gaps"]), list(result["gaps"])
    assert not any(r["table"] == "main" and r["protocol"] == "batch" and r["distribution"] == "Gaussian"
                   for r in result["rows"])


def test_duplicate_json_keys_are_a_gap(release):
    """Python keeps the last of two equal keys silently: a release file can show one reader one value and this
    reader another."""
    path = release / R.MCQ_RESULTS
    text = path.read_text()
    path.write_text(text.replace('{"mcq": {', '{"mcq": {}, "mcq": {', 1))
    result = R.reproduce_dice(release, manifest=None)
    assert any("duplicate key" in g and "downstream_results" in g for g in result["gaps"]), list(result["gaps"])


# ------------------------------------------------------------------------------------------------ the checksums

def _rows(result, protocol=None, dist=None):
    return [r for r in result["rows"] if r["table"] == "main" and (protocol is None or r["protocol"] == protocol)
            and (dist is None or r["distribution"] == dist)]


def test_edits_with_a_recomputed_sidecar_are_refused(release):
    """The hashes were read from the folder they check: an edit with its sidecar recomputed passed. The manifest
    comes from outside the release; the edited files are named and not read, the rest is scored."""
    import hashlib

    clean = R.reproduce_dice(release, manifest=manifest_file(release))
    refs = dict(np.load(release / f"{R.REFERENCE}.npz"))
    refs["batch/Gaussian"] = refs["batch/Gaussian"] + 3.0
    np.savez(release / f"{R.REFERENCE}.npz", **refs)
    side = json.loads((release / f"{R.REFERENCE}.json").read_text())
    side["references"]["batch"]["Gaussian"]["sha256"] = hashlib.sha256(refs["batch/Gaussian"].tobytes()).hexdigest()
    (release / f"{R.REFERENCE}.json").write_text(json.dumps(side))
    raw = next((release / R.RAW / "independent" / "Beta").glob("gpt-4o_*.json"))
    doc = json.loads(raw.read_text())
    doc["samples"] = [0.5] * len(doc["samples"])
    raw.write_text(json.dumps(doc))
    result = R.reproduce_dice(release, manifest=manifest_file(release))
    gaps = [g for g in result["gaps"] if "checksum differs from the published release" in g]
    # the sidecar is not even read once the archive it vouches for is refused
    assert {g.split(":")[0] for g in gaps} == {f"{R.REFERENCE}.npz", raw.relative_to(release).as_posix()}, gaps
    assert _rows(result, "batch") == [] and len(_rows(clean, "batch")) > 0  # no reference vouched for
    assert [r["model"] for r in _rows(result, "independent", "Beta")] == []  # the other model needs a reference too
    mcq = [r for r in result["rows"] if r["table"] == "mcq"]
    assert mcq == [r for r in clean["rows"] if r["table"] == "mcq"]  # the untouched files are read as before


def test_a_file_the_release_did_not_publish_is_not_read(release):
    """A model file added beside the published ones (the first file of a model wins) is a gap, never scored."""
    extra = release / R.RAW / "batch" / "Gaussian" / "aaa_gpt-4o_gaussian_batch_20200101_000000.json"
    extra.write_text(json.dumps({"model": "gpt-4o", "samples": [0.0] * 150}))
    result = R.reproduce_dice(release, manifest=manifest_file(release))
    assert any(g.startswith(extra.relative_to(release).as_posix()) and "not a file of the published release" in g
               for g in result["gaps"]), list(result["gaps"])
    cell = next(r for r in _rows(result, "batch", "Gaussian") if r["model"] == "GPT-4o")
    assert cell["file"] != extra.relative_to(release).as_posix()


def test_the_synthetic_release_fails_closed_against_the_published_checksums(release, monkeypatch):
    """No manifest named: the published release's, shipped with ub, which the synthetic files do not match."""
    monkeypatch.delenv(R.MANIFEST_ENV, raising=False)
    result = R.reproduce_dice(release)
    assert result["rows"] == [] and result["gaps"].counts["unverified file"] > 0
    assert all("published release" in g for g in result["gaps"] if "checksum" in g or "not a file" in g)


def test_the_shipped_manifest_covers_every_file_the_reader_reads():
    """The published release's checksums (its commit named) list each file the reader opens, in its layout."""
    doc = json.loads(R.MANIFEST_FILE.read_text())
    assert doc["release"] == "Mininda/LLM_Bad_Dice_Player" and len(doc["commit"]) == 40
    sums = R.load_manifest(R.MANIFEST_FILE)
    for path in (f"{R.REFERENCE}.npz", f"{R.REFERENCE}.json", R.MAIN_RESULTS, R.MCQ_RESULTS):
        assert path in sums, path
    for folder in R.MCQ_MODELS.values():
        assert f"{R.MCQ_DIR}/{folder}/answer_statistics.json" in sums
        assert f"{R.MCQ_DIR}/{folder}/all_questions.json" in sums
    for protocol in R.PROTOCOLS:
        for dist in DICE_ORDER:
            raw = [k for k in sums if k.startswith(f"{R.RAW}/{protocol}/{dist}/")]
            assert len(raw) >= len(R.MODELS), (protocol, dist, len(raw))


@pytest.mark.parametrize("content", ["{}", '{"files": {"a": "not-a-hash"}}', '{"files": {"a": 1}, "files": {}}',
                                     "[1, 2"])
def test_a_manifest_that_cannot_be_used_is_one_line(release, tmp_path, content, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ValueError, match="manifest") as e:
        R.reproduce_dice(release, manifest=bad)
    assert "\n" not in str(e.value)
    assert cli.main(["reproduce", "dice", "--release", str(release), "--manifest", str(bad)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
