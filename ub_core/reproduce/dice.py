"""``ub reproduce dice --release DIR``: the "Bad Dice Players" paper's main table and downstream MCQ table
recomputed from its public release's own files (``Mininda/LLM_Bad_Dice_Player``, which the user clones).

What is read (the release's layout):

- ``data/raw_results/<protocol>/<Distribution>/*.json`` (``batch``, ``independent``): one file per model, a JSON
  object with the model's id under ``model`` (or ``model_name``) and its parsed draws under ``samples``. As the
  release does: files are taken in name order, those named ``*backup*`` / ``*retest*`` are left out, the first
  file of a model wins, and a file with fewer than 10 draws is not scored (here a named gap);
- ``data/reference/reference_samples_aligned_seed42_n1000.npz``: the 1,000 reference draws of each law per
  protocol (``<protocol>/<Distribution>``), checked against the SHA-256 the release's JSON sidecar states;
- ``data/downstream/mcq/raw_outputs/<model>/all_questions.json``: the generated questions (``content``, and the
  release's ``parsed_answer``); where it is missing, the counts of ``answer_statistics.json`` (named as the
  row's ``source`` and listed as a gap);
- ``data/processed/recomputed_main_results.json`` and ``data/processed/downstream/downstream_results.json``: the
  release's own figures, compared cell by cell (max absolute differences in the output).

Scoring is :mod:`ub_core.metrics.dice` in the chosen convention: ``release`` (two-sample KS against the reference
draws, pooled chi-square for the discrete laws; MCQ letters as the release parsed them) or ``default`` (exact
one-sample tests against the stated law, W1 against seeded draws of the law; MCQ letters read by
:func:`~ub_core.parsing.answer_key.read_answer_key`).

**Integrity fails closed.** The SHA-256 of every file of the published release this reads ships with the package
(``dice_release_sha256.json``, taken from the release's commit it names): a file whose bytes differ, or one the
manifest does not list (a model file added to a folder), is a named gap and is not read, whatever the release's
own sidecar says; a file the manifest lists and the checkout lacks is a gap as before. A re-publication with other
bytes is checked against a manifest the user names (``--manifest FILE`` or ``$UB_DICE_RELEASE_MANIFEST``), never
against one inside the release. Besides, each reference array is checked against the release's sidecar, an array
the sidecar does not vouch for or of another size than the others is left out, and a release figure that is not
a finite number (``NaN``, ``10**400``) is a gap of its own, never hidden in a summary.

The files are outside input: each is read with a size cap (:data:`MAX_FILE_BYTES`), JSON through
:func:`~ub_core.untrusted.loads`; a missing or damaged file, a non-finite or non-numeric draw (counted
and dropped), a stated count that disagrees with the draws, a missing model cell, is one named, counted gap, never
a crash. The exit status is 1 when there is a gap.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..metrics.dice import (DICE_ALPHA, DICE_CONVENTIONS, DICE_LAWS, DICE_ORDER, MCQ_LETTERS, dice_scores,
                            law_draws, letter_uniformity, passes)
from ..parsing.answer_key import read_answer_key
from ..untrusted import (ErrorSummary, UntrustedFileError, UntrustedJSONError, UntrustedNumberError,
                                       finite_number, loads, read_bytes, read_npz, read_text, short)

__all__ = ["PROTOCOLS", "MODELS", "MCQ_MODELS", "PAPER_PASS_PERCENT", "MAX_FILE_BYTES", "RELEASE_N",
           "RELEASE_TEMPERATURE", "PUBLISHED", "MANIFEST_FILE", "MANIFEST_ENV", "load_manifest", "display_name",
           "reproduce_dice", "main_table", "format_report", "add_parser"]

PROTOCOLS = ("batch", "independent")
#: The paper's 11 models, in its table order.
MODELS = ("GPT-5.2", "Gemini-3", "GPT-4o", "DeepSeek-V3.2", "Qwen3", "Gemma-3", "Mistral-3.2", "Kimi-K2",
          "Llama-3.3", "Llama-4", "GPT-OSS")
#: Both protocols of the release ask for 1,000 values per law at temperature 1.0 (its configs/protocols.json).
RELEASE_N = 1000
RELEASE_TEMPERATURE = 1.0
#: The MCQ task's models and their folders under ``data/downstream/mcq/raw_outputs``.
MCQ_MODELS = {"GPT-4o": "gpt4o", "Llama-3.3": "llama33", "DeepSeek-V3.2": "deepseek", "Qwen3": "qwen3",
              "Llama-4": "llama4", "GPT-OSS": "gptoss"}
#: The paper's pass rates (percent of the 15 laws with p > 0.01) per protocol and model (its Table 1).
PAPER_PASS_PERCENT: dict[str, dict[str, int]] = {
    "batch": {"GPT-5.2": 13, "Gemini-3": 13, "GPT-4o": 40, "DeepSeek-V3.2": 7, "Qwen3": 0, "Gemma-3": 7,
              "Mistral-3.2": 0, "Kimi-K2": 20, "Llama-3.3": 0, "Llama-4": 7, "GPT-OSS": 13},
    "independent": {**{m: 0 for m in MODELS}, "Llama-4": 7},
}
#: The paper's headline: median batch pass rate (percent); models passing no law under independent requests.
PAPER_HEADLINE = {"batch_median_pass_percent": 7, "independent_models_passing_none": 10}
#: Larger than any released file (the largest raw file is about 0.2 MB, a question file about 1.2 MB).
MAX_FILE_BYTES = 32 * 2**20
#: What the reference ``.npz`` may unpack to, per member and in all: the release's 30 arrays of 1,000 float64
#: draws unpack to 8 KB each, 240 KB in all; the caps are checked as the bytes are unpacked, whatever the archive's
#: directory declares.
MAX_REFERENCE_MEMBER_BYTES = 1 * 2**20
MAX_REFERENCE_TOTAL_BYTES = 16 * 2**20
MIN_DRAWS = 10
#: Gaps named one by one (all of a complete release's 330 cells and 12 MCQ files fit); the rest are counted.
MAX_GAPS_NAMED = 2000
REFERENCE = "data/reference/reference_samples_aligned_seed42_n1000"
RAW = "data/raw_results"
MCQ_DIR = "data/downstream/mcq/raw_outputs"
MAIN_RESULTS = "data/processed/recomputed_main_results.json"
MCQ_RESULTS = "data/processed/downstream/downstream_results.json"
#: The SHA-256 of every file of the published release that is read, shipped with the package.
MANIFEST_FILE = Path(__file__).with_name("dice_release_sha256.json")
#: A manifest of the user's choosing (a re-publication of the release), instead of the shipped one.
MANIFEST_ENV = "UB_DICE_RELEASE_MANIFEST"
#: ``manifest=PUBLISHED``: the file named by :data:`MANIFEST_ENV`, else :data:`MANIFEST_FILE`.
PUBLISHED = "published"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SHA1 = re.compile(r"[0-9a-f]{40}")

# normalised model id (lower case, runs of / _ - . as one _) -> the paper's name
_MODEL_KEYS = (("gpt_5_2", "GPT-5.2"), ("gemini_3", "Gemini-3"), ("gpt_4o", "GPT-4o"),
               ("deepseek_v3_2", "DeepSeek-V3.2"),
               ("qwen3", "Qwen3"), ("gemma_3", "Gemma-3"), ("mistral_small_3_2", "Mistral-3.2"),
               ("kimi_k2", "Kimi-K2"), ("llama_3_3", "Llama-3.3"), ("llama_4", "Llama-4"), ("gpt_oss", "GPT-OSS"))


def display_name(model_id: Any) -> str:
    """The paper's name of a release model id (``meta-llama/Llama-3.3-70B-Instruct-Turbo`` -> ``Llama-3.3``);
    an unknown id is returned as written (cut to 60 characters)."""
    key = re.sub(r"[/_.\-]+", "_", str(model_id).lower())
    for part, name in _MODEL_KEYS:
        if part in key:
            return name
    return str(model_id)[:60]


# ------------------------------------------------------------------------------------------------ reading

def load_manifest(source: Any = PUBLISHED) -> dict[str, str] | None:
    """``{path in the release: checksum}`` of the release's files, a checksum being a SHA-256 (64 hex digits) or,
    under the manifest's ``git_blob_sha1``, ``"git:"`` and git's object id of the file (a file of the published
    release whose bytes were not at hand when the shipped manifest was made: SHA-1, weaker than SHA-256, but
    still a check that fails closed). ``PUBLISHED`` (the default) reads the file named
    by ``$UB_DICE_RELEASE_MANIFEST``, else the manifest shipped with the package; a path reads that file; a mapping
    is taken as the manifest itself (``{"files": {...}}`` or the files alone); None checks nothing (for tests of
    what lies behind the checksums). A manifest that cannot be read is a one-line ValueError."""
    if source is None:
        return None
    if source == PUBLISHED:
        source = os.environ.get(MANIFEST_ENV) or MANIFEST_FILE
    doc = source
    if not isinstance(source, Mapping):
        try:
            doc = loads(read_text(source, MAX_FILE_BYTES), unique_keys=True)
        except (UntrustedFileError, UntrustedJSONError) as e:
            raise ValueError(f"the dice release manifest {short(str(source), 120)} cannot be read ({e})") from None
    files = doc.get("files", doc) if isinstance(doc, Mapping) else None
    blobs = doc.get("git_blob_sha1", {}) if isinstance(doc, Mapping) and "files" in doc else {}
    if not isinstance(files, Mapping) or not files or not isinstance(blobs, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and _SHA256.fullmatch(v) for k, v in files.items()) \
            or not all(isinstance(k, str) and isinstance(v, str) and _SHA1.fullmatch(v) for k, v in blobs.items()):
        raise ValueError(f"the dice release manifest {short(str(source), 120)} is not a list of SHA-256 "
                         "checksums by path ({\"files\": {\"data/...\": \"<64 hex digits>\"}})")
    return {**{k: f"git:{v}" for k, v in blobs.items()}, **files}


def _checksum(data: bytes, want: str) -> str:
    """``data``'s checksum in the form of ``want`` (a SHA-256, or ``git:`` and git's blob id)."""
    if want.startswith("git:"):
        return "git:" + hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return hashlib.sha256(data).hexdigest()


def _verified_bytes(path: Path, root: Path, gaps: ErrorSummary, manifest: Mapping[str, str] | None,
                    kind: str = "damaged file") -> bytes | None:
    """The bytes of a release file, or None after one named gap: missing, too large, not a regular file, or (with
    a manifest) not the published release's bytes or not one of its files."""
    rel = _rel(path, root)
    try:
        data = read_bytes(path, MAX_FILE_BYTES)
    except UntrustedFileError as e:
        gaps.add("missing file" if "(missing)" in e.reason else kind, f"{rel}: {e.reason}")
        return None
    if manifest is not None:
        try:
            key = path.relative_to(root).as_posix()
        except ValueError:
            key = None
        want = manifest.get(key) if key is not None else None
        if want is None:
            gaps.add("unverified file", f"{rel}: not a file of the published release (no checksum in the "
                                        "manifest); not read")
            return None
        if _checksum(data, want) != want:
            gaps.add("unverified file", f"{rel}: checksum differs from the published release's; not read")
            return None
    return data


def _read_json(path: Path, root: Path, gaps: ErrorSummary, kind: str = "damaged file",
               manifest: Mapping[str, str] | None = None) -> Any:
    """The decoded JSON of a release file, or None after one named gap (missing, too large, not the published
    bytes, not JSON, a repeated key)."""
    data = _verified_bytes(path, root, gaps, manifest, kind)
    if data is None:
        return None
    try:
        return loads(data, unique_keys=True)
    except UntrustedJSONError as e:
        gaps.add(kind, f"{_rel(path, root)}: {e}")
    return None


def _rel(path: Path, root: Path) -> str:
    try:
        return short(str(path.relative_to(root)), 160).strip("'\"")
    except ValueError:
        return short(path.name, 160).strip("'\"")


def _numbers(values: Any, rel: str, gaps: ErrorSummary) -> np.ndarray:
    """The finite numbers of a list (``bool`` is not a number); the rest are counted in one gap."""
    good = [float(v) for v in values
            if isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v)]
    if len(good) != len(values):
        gaps.add("rejected values", f"{rel}: {len(values) - len(good):,} of {len(values):,} draws not finite "
                                    f"numbers, dropped")
    return np.asarray(good, float)


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer too large for a float
        return False


def _stated_count(payload: Mapping) -> Any:
    stats = payload.get("statistics")
    for holder, key in ((payload, "actual_samples"), (stats, "total_samples")):
        if isinstance(holder, Mapping) and isinstance(holder.get(key), int):
            return holder[key]
    return None


def read_raw(root: Path, protocol: str, distribution: str, gaps: ErrorSummary,
             manifest: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """model -> ``{"samples", "file", "requested"}`` for one release folder (the release's file rules, see the
    module docstring); every problem is a named gap."""
    folder = root / RAW / protocol / distribution
    if not folder.is_dir():
        gaps.add("missing folder", f"{_rel(folder, root)}: missing")
        return {}
    out: dict[str, dict[str, Any]] = {}
    files = sorted(p for p in folder.glob("*.json") if "backup" not in p.name.lower()
                   and "retest" not in p.name.lower())
    for path in files:
        rel = _rel(path, root)
        payload = _read_json(path, root, gaps, manifest=manifest)
        if payload is None:
            continue
        if not isinstance(payload, dict) or not isinstance(payload.get("samples"), list):
            gaps.add("damaged file", f"{rel}: no list of draws under 'samples'")
            continue
        model = display_name(payload.get("model") or payload.get("model_name") or "unknown")
        if model in out:
            continue  # the release keeps the first file of a model
        draws = _numbers(payload["samples"], rel, gaps)
        stated = _stated_count(payload)
        if stated is not None and stated != len(payload["samples"]):
            gaps.add("count mismatch", f"{rel}: states {stated:,} draws, holds {len(payload['samples']):,}")
        if draws.size < MIN_DRAWS:
            gaps.add("too few draws", f"{rel}: {draws.size} usable draws, under {MIN_DRAWS}; not scored")
            continue
        requested = payload.get("requested_samples")
        if not isinstance(requested, int) and isinstance(payload.get("statistics"), Mapping):
            requested = payload["statistics"].get("requested_samples")
        out[model] = {"samples": draws, "file": rel, "requested": requested if isinstance(requested, int) else None}
    return out


def read_references(root: Path, gaps: ErrorSummary, manifest: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """``"<protocol>/<Distribution>"`` -> the release's reference draws; each array whose SHA-256 disagrees with
    the sidecar JSON, or that is not a finite 1-D float array, is a gap and left out."""
    path = root / f"{REFERENCE}.npz"
    data = _verified_bytes(path, root, gaps, manifest)
    if data is None:
        return {}
    try:
        arrays = read_npz(path, max_file_bytes=MAX_FILE_BYTES, max_member_bytes=MAX_REFERENCE_MEMBER_BYTES,
                          max_total_bytes=MAX_REFERENCE_TOTAL_BYTES, data=data)
    except UntrustedFileError as e:
        kind = "missing file" if "(missing)" in e.reason else "damaged file"
        gaps.add(kind, f"{_rel(path, root)}: {e.reason}")
        return {}
    sidecar = _read_json(root / f"{REFERENCE}.json", root, gaps, manifest=manifest) or {}
    sums = sidecar.get("references", {}) if isinstance(sidecar, dict) else {}
    sizes = statistics.multimode(a.size for a in arrays.values() if a.ndim == 1) if arrays else []
    usual = max(sizes) if sizes else None
    out = {}
    for key, arr in arrays.items():
        protocol, _, dist = key.partition("/")
        if arr.ndim != 1 or arr.dtype.kind not in "fi" or not np.all(np.isfinite(arr)):
            gaps.add("damaged reference", f"{short(key, 80)}: not a finite 1-D array of numbers")
            continue
        if arr.size < MIN_DRAWS or arr.size != usual:  # the release's references all hold RELEASE_N draws
            gaps.add("damaged reference", f"{short(key, 80)}: {arr.size:,} draw(s), where the release's other "
                                          f"references hold {usual:,}; left out")
            continue
        arr = arr.astype(np.float64)
        want = sums.get(protocol, {}).get(dist, {}).get("sha256") if isinstance(sums.get(protocol), dict) else None
        if not isinstance(want, str):  # fail closed: an array nobody vouches for is not scored against
            gaps.add("damaged reference", f"{short(key, 80)}: no SHA-256 in the sidecar JSON; left out")
            continue
        if hashlib.sha256(arr.tobytes()).hexdigest() != want:
            gaps.add("damaged reference", f"{short(key, 80)}: SHA-256 differs from the sidecar JSON")
            continue
        out[key] = arr
    return out


# ------------------------------------------------------------------------------------------------ scoring

def _main_rows(root: Path, convention: str, alpha: float, seed: int, gaps: ErrorSummary,
               protocols: tuple[str, ...] = PROTOCOLS,
               manifest: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    refs = read_references(root, gaps, manifest) if convention == "release" else {}
    rows = []
    for protocol in protocols:
        for dist in DICE_ORDER:
            found = read_raw(root, protocol, dist, gaps, manifest)
            ref = refs.get(f"{protocol}/{dist}") if convention == "release" else law_draws(dist, seed=seed)
            if convention == "release" and ref is None and found:
                gaps.add("missing reference", f"{protocol}/{dist}: no usable reference draws; "
                                              f"{len(found)} model(s) not scored")
                continue
            for model in [*MODELS, *sorted(set(found) - set(MODELS))]:
                item = found.get(model)
                if item is None:
                    if (root / RAW / protocol / dist).is_dir():
                        gaps.add("missing cell", f"{protocol}/{dist}/{model}: no file")
                    continue
                s = dice_scores(dist, item["samples"], convention=convention, reference=ref, alpha=alpha, seed=seed)
                rows.append({"table": "main", "protocol": protocol, "distribution": dist, "model": model,
                             "n": s["n"], "p_value": s["p_value"], "w1": s["w1"], "passed": s["passed"],
                             "requested": item["requested"], "tier": DICE_LAWS[dist].tier, "file": item["file"]})
    return rows


def _mcq_letters(questions: Any, convention: str, rel: str, gaps: ErrorSummary) -> dict[str, int] | None:
    if not isinstance(questions, list):
        gaps.add("damaged file", f"{rel}: not a list of questions")
        return None
    counts = dict.fromkeys(MCQ_LETTERS, 0)
    unread = 0
    for q in questions:
        if not isinstance(q, dict):
            unread += 1
            continue
        letter = q.get("parsed_answer") if convention == "release" else read_answer_key(q.get("content"))
        if isinstance(letter, str) and letter in counts:
            counts[letter] += 1
        else:
            unread += 1
    if unread:  # the release counts the questions it could read; so do we, and say how many it could not
        gaps.add("unread questions", f"{rel}: {unread:,} of {len(questions):,} questions without an A-D answer key")
    return counts


#: the most answers a tally may state per letter: far above any release (40 to 1,000 questions), far below what
#: would overflow the chi-square's floats
MAX_COUNT = 10**9


def _bad_count(dist: Any) -> str | None:
    """Why a release tally (``{"A": 12, ...}``) cannot be used, or None."""
    if not isinstance(dist, dict):
        return "no A-D counts under 'distribution'"
    for k in MCQ_LETTERS:
        v = dist.get(k, 0)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_COUNT:
            return f"the count of {k} under 'distribution' is not a whole number from 0 to {MAX_COUNT:,} " \
                   f"({short(v, 30)})"
    return None


def _mcq_rows(root: Path, convention: str, gaps: ErrorSummary,
              manifest: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    rows = []
    for model, folder in MCQ_MODELS.items():
        path = root / MCQ_DIR / folder / "all_questions.json"
        source = "all_questions"
        questions = _read_json(path, root, gaps, manifest=manifest)
        counts = None if questions is None else _mcq_letters(questions, convention, _rel(path, root), gaps)
        if counts is None:  # the release's own tally, where the questions cannot be read
            stats_path = root / MCQ_DIR / folder / "answer_statistics.json"
            st = _read_json(stats_path, root, gaps, manifest=manifest)
            dist = st.get("distribution") if isinstance(st, dict) else None
            bad = _bad_count(dist)
            if bad is not None:
                if st is not None:
                    gaps.add("damaged file", f"{_rel(stats_path, root)}: {bad}")
                continue
            counts, source = {k: dist.get(k, 0) for k in MCQ_LETTERS}, "answer_statistics"
        if sum(counts.values()) == 0:
            gaps.add("unread questions", f"{model}: no question with an A-D answer key")
            continue
        res = letter_uniformity(counts)
        rows.append({"table": "mcq", "model": model, "n": res["n"], "counts": res["counts"], "chi2": res["chi2"],
                     "p_value": res["p_value"], "source": source})
    return rows


def _compare(rows: list[dict], root: Path, gaps: ErrorSummary,
             manifest: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Max |difference| between our rows and the release's processed files, cell by cell."""
    out: dict[str, Any] = {}
    main = _read_json(root / MAIN_RESULTS, root, gaps, manifest=manifest)
    if isinstance(main, dict):
        dp, dw, cells, unmatched, hostile = [], [], 0, 0, 0
        for r in (r for r in rows if r["table"] == "main"):
            theirs = main.get(r["protocol"], {}).get(r["distribution"], {}) if isinstance(
                main.get(r["protocol"]), dict) else {}
            cell = theirs.get(r["model"]) if isinstance(theirs, dict) else None
            if not isinstance(cell, dict) or not all(k in cell for k in ("pval", "w1")):
                unmatched += 1
                continue
            where = f"{MAIN_RESULTS}: {r['protocol']}/{r['distribution']}/{r['model']}"
            try:  # a NaN or 10**400 is named here, never passed to a max that would hide or overflow on it
                pval, w1 = finite_number(cell["pval"], "pval"), finite_number(cell["w1"], "w1")
            except UntrustedNumberError as e:
                gaps.add("non-finite release value", f"{where}: {e}; cell not compared")
                hostile += 1
                continue
            cells += 1
            r["release_p_value"], r["release_w1"] = pval, w1
            dp.append(abs(r["p_value"] - pval))
            dw.append(abs(r["w1"] - w1))
        out["main"] = {"cells": cells, "unmatched": unmatched, "not_finite": hostile,
                       "max_abs_dp": max(dp, default=None), "max_abs_dw1": max(dw, default=None)}
    mcq = _read_json(root / MCQ_RESULTS, root, gaps, manifest=manifest)
    if isinstance(mcq, dict) and isinstance(mcq.get("mcq"), dict):
        same, dp, cells, hostile = 0, [], 0, 0
        for r in (r for r in rows if r["table"] == "mcq"):
            cell = mcq["mcq"].get(r["model"])
            if not isinstance(cell, dict) or "p_value" not in cell:
                continue
            try:
                pval = finite_number(cell["p_value"], "p_value")
            except UntrustedNumberError as e:
                gaps.add("non-finite release value", f"{MCQ_RESULTS}: mcq/{r['model']}: {e}; model not compared")
                hostile += 1
                continue
            cells += 1
            theirs = cell.get("counts") if isinstance(cell.get("counts"), dict) else {}
            same += all(theirs.get(k) == r["counts"][k] for k in MCQ_LETTERS)
            r["release_p_value"] = pval
            dp.append(abs(r["p_value"] - pval))
        out["mcq"] = {"models": cells, "counts_equal": same, "not_finite": hostile,
                      "max_abs_dp": max(dp, default=None)}
    return out


def _summary(rows: list[dict], alpha: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for protocol in PROTOCOLS:
        per = {}
        for model in MODELS:
            ps = [r["p_value"] for r in rows if r["table"] == "main" and r["protocol"] == protocol
                  and r["model"] == model]
            if ps:
                per[model] = {"passed": sum(passes(p, alpha) for p in ps), "scored": len(ps),
                              "pass_percent": round(100 * sum(passes(p, alpha) for p in ps) / len(ps)),
                              "paper_pass_percent": PAPER_PASS_PERCENT[protocol].get(model)}
        out[protocol] = {"models": per,
                         "median_pass_percent": statistics.median(v["pass_percent"] for v in per.values())
                         if per else None,
                         "models_passing_none": sum(v["passed"] == 0 for v in per.values())}
    out["paper"] = dict(PAPER_HEADLINE)
    return out


def _checked_root(release: str | Path, convention: str) -> Path:
    if convention not in DICE_CONVENTIONS:
        raise ValueError(f"--convention must be one of {', '.join(DICE_CONVENTIONS)}, got {convention!r}")
    root = Path(release)
    if not (root / RAW).is_dir():
        raise ValueError(f"{short(str(release), 120)}: not a checkout of the dice release (no {RAW} folder)")
    return root


def main_table(release: str | Path, protocols: Any = PROTOCOLS, convention: str = "release",
               alpha: float = DICE_ALPHA, seed: int = 0,
               manifest: Any = PUBLISHED) -> tuple[list[dict[str, Any]], ErrorSummary]:
    """The main table's rows of ``protocols`` only (one row per protocol, law and model, as :func:`reproduce_dice`
    gives them) and the gaps met reading them: what ``ub report --published`` and ``ub compare --published``
    put beside a lab's run. A folder without the release's layout, an unknown convention or protocol is a
    one-line ValueError."""
    root = _checked_root(release, convention)
    protocols = tuple(protocols)
    bad = [p for p in protocols if p not in PROTOCOLS]
    if bad:
        raise ValueError(f"unknown dice protocol {bad[0]!r}; the release has {', '.join(PROTOCOLS)}")
    sums = load_manifest(manifest)
    gaps = ErrorSummary(keep=MAX_GAPS_NAMED)
    return _main_rows(root, convention, alpha, seed, gaps, protocols, sums), gaps


def reproduce_dice(release: str | Path, convention: str = "release", alpha: float = DICE_ALPHA,
                   seed: int = 0, manifest: Any = PUBLISHED) -> dict[str, Any]:
    """Both tables from a release checkout, every file checked against ``manifest`` (:func:`load_manifest`: by
    default the published release's checksums). Returns ``{"convention", "alpha", "rows", "summary",
    "comparison", "gaps": ErrorSummary}``; a folder without the release's layout, an unknown convention or an
    unreadable manifest is a one-line ValueError."""
    root = _checked_root(release, convention)
    sums = load_manifest(manifest)
    gaps = ErrorSummary(keep=MAX_GAPS_NAMED)
    rows = _main_rows(root, convention, alpha, seed, gaps, manifest=sums) + _mcq_rows(root, convention, gaps, sums)
    comparison = _compare(rows, root, gaps, sums)
    return {"convention": convention, "alpha": alpha, "rows": rows, "summary": _summary(rows, alpha),
            "comparison": comparison, "gaps": gaps}


# ------------------------------------------------------------------------------------------------ output

def _w1(x: float) -> str:
    return f"{x:.0e}" if x < 0.01 else f"{x:.2f}" if x < 1 else f"{x:.1f}" if x < 1e4 else f"{x:.1e}"


def _num(x: Any, fmt: str) -> str:
    return "n/a" if x is None else format(x, fmt)


def format_report(result: Mapping[str, Any]) -> str:
    """Per protocol a law x model table of W1 (``*``: passed at alpha), each model's pass rate beside the
    paper's; the MCQ table; the headline beside the paper's; the comparison with the release's files; the gaps."""
    rows, summary = result["rows"], result["summary"]
    lines = [f"Bad Dice Players, {result['convention']} convention, alpha = {result['alpha']}: W1 per cell, "
             f"'*' where the test passes (p > alpha)"]
    width = 9
    for protocol in PROTOCOLS:
        cells = {(r["distribution"], r["model"]): r for r in rows if r["table"] == "main" and r["protocol"] == protocol}
        models = [m for m in MODELS if any(k[1] == m for k in cells)]
        lines += ["", f"{protocol}", f"{'law':<14}" + "".join(f"{m[:width - 1]:>{width}}" for m in models)]
        for dist in DICE_ORDER:
            marked = {m: _w1(cells[dist, m]["w1"]) + ("*" if cells[dist, m]["passed"] else " ")
                      for m in models if (dist, m) in cells}
            lines.append(f"{dist:<14}" + "".join(f"{marked.get(m, '-'):>{width}}" for m in models))
        per = summary[protocol]["models"]
        lines.append(f"{'pass % (ours)':<14}" + "".join(f"{per[m]['pass_percent']:>{width}}" for m in models))
        lines.append(f"{'pass % (paper)':<14}" + "".join(
            f"{_num(per[m]['paper_pass_percent'], 'd'):>{width}}" for m in models))
    lines += ["", "MCQ answer-key letters (uniform over A-D expected)",
              f"{'model':<15}{'A':>6}{'B':>6}{'C':>6}{'D':>6}{'n':>7}{'chi2':>10}{'p':>12}  source"]
    for r in (r for r in rows if r["table"] == "mcq"):
        c = r["counts"]
        lines.append(f"{r['model']:<15}" + "".join(f"{c[k]:>6}" for k in MCQ_LETTERS)
                     + f"{r['n']:>7}{r['chi2']:>10.2f}{r['p_value']:>12.3g}  {r['source']}")
    b, i, paper = summary["batch"], summary["independent"], summary["paper"]
    lines += ["", "headline (ours | paper):",
              f"  batch: median pass rate {_num(b['median_pass_percent'], 'g')}% | "
              f"{paper['batch_median_pass_percent']}%",
              f"  independent: {i['models_passing_none']} of {len(i['models'])} models pass no law | "
              f"{paper['independent_models_passing_none']} of {len(MODELS)}"]
    cmp_ = result["comparison"]
    if "main" in cmp_:
        m = cmp_["main"]
        lines.append(f"against the release's {MAIN_RESULTS}: {m['cells']} cells, max |dp| "
                     f"{_num(m['max_abs_dp'], '.3g')}, max |dW1| {_num(m['max_abs_dw1'], '.3g')}"
                     + (f", {m['unmatched']} of our cells not in it" if m["unmatched"] else "")
                     + (f", {m['not_finite']} release value not a finite number (a gap)"
                        if m.get("not_finite") == 1 else
                        f", {m['not_finite']} release values not finite numbers (gaps)" if m.get("not_finite")
                        else ""))
    if "mcq" in cmp_:
        m = cmp_["mcq"]
        lines.append(f"against the release's MCQ results: {m['counts_equal']} of {m['models']} models with equal "
                     f"counts, max |dp| {_num(m['max_abs_dp'], '.3g')}"
                     + (f", {m['not_finite']} release p-value(s) not finite numbers (gaps)" if m.get("not_finite")
                        else ""))
    gaps: ErrorSummary = result["gaps"]
    if gaps.total:
        lines += ["", f"{gaps.total} gap(s): " + ", ".join(f"{n} x {k}" for k, n in gaps.counts.most_common())]
        lines += [f"gap: {g}" for g in gaps.lines()]
    return "\n".join(lines)


def _json_value(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _json_value(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_value(v) for v in x]
    return x


def _cmd(args: Any) -> int:
    result = reproduce_dice(args.release, convention=args.convention, alpha=args.alpha,
                            manifest=args.manifest or PUBLISHED)
    gaps: ErrorSummary = result["gaps"]
    if args.json:
        doc = {"convention": result["convention"], "alpha": result["alpha"], "rows": result["rows"],
               "summary": result["summary"], "comparison": result["comparison"],
               "gaps": gaps.lines(), "gap_count": gaps.total, "gap_kinds": dict(gaps.counts)}
        print(json.dumps(_json_value(doc), allow_nan=False))
    else:
        print(format_report(result))
    return 1 if gaps.total else 0


def add_parser(sub: Any) -> None:
    """Register ``dice`` on the ``ub reproduce`` subparsers."""
    p = sub.add_parser("dice", help="the Bad Dice Players paper's main and MCQ tables from its release's files")
    p.add_argument("--release", required=True, help="a checkout of Mininda/LLM_Bad_Dice_Player")
    p.add_argument("--convention", choices=DICE_CONVENTIONS, default="release",
                   help="release: the release's tests (two-sample KS against its reference draws, pooled chi2); "
                        "default: exact one-sample tests against the stated law (default: release)")
    p.add_argument("--alpha", type=_alpha, default=DICE_ALPHA, help="significance level (default 0.01)")
    p.add_argument("--manifest", metavar="FILE", help="SHA-256 checksums of the release's files to check against "
                                                      f"(default: ${MANIFEST_ENV}, else the published release's, "
                                                      "shipped with ub)")
    p.add_argument("--json", action="store_true", help="one JSON document: rows (table main / mcq), summary, "
                                                       "comparison, gaps, gap_count, gap_kinds")
    p.set_defaults(func=_cmd)


def _alpha(text: str) -> float:
    import argparse

    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1, got {text!r}")
    return v
