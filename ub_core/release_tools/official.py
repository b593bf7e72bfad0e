"""Loaders: the built-in banks and the officially released UnpredictaBench files.

Users who have the released questions can run the published prompts exactly. A release is

- questions: rows with ``id, uid, category, subcategory, prompt_title, prompt_text``, as a Hugging Face dataset id
  (through :func:`datasets.load_dataset`), a local dataset folder, or local JSON / JSONL / parquet files
  exported from it;
- ground truth: a folder in the release layout, ``ground_truth_values/<task folder>/ground_truth_values.json``
  (the release's own, or what ``ub official truth`` builds from ``ground_truth_codes/``; see
  :func:`load_release_truth`), or one ``ground_truth_values.json``: a list of rows
  ``{"uid": ..., "ground_truth_values": [...]}`` or a mapping ``uid -> list of reference values`` (``{"values":
  [...]}`` objects are accepted too). Values are numbers, labels, or lists for shuffles. The task folder sets
  category and regime (:func:`release_folder_info`); ``realworld_mapping.json`` sets how real-world answers are read
  (:func:`load_answer_mapping`: single item selection, selection separated by new lines, shuffling separated by
  new lines).

Each row becomes a :class:`~ub_core.problems.Problem` of bank ``official`` whose ``truth()`` returns the released
reference values, so scoring uses the published ground truth, not ours. How the support is inferred from the
released values: all numbers -> ``discrete`` when all are integers, else ``continuous``; all strings ->
``categorical``; all lists -> ``permutation``, scored by Lehmer Z1.

Codes are assigned one to one and deterministically (never from the iteration order of a set, which changes with
``PYTHONHASHSEED``), with the equivalence the reply parser uses, so a reply reads back to the code of the label it
copies:

- labels: case and runs of spaces do not matter (``red``, ``Red`` and ``RED`` are one option, shown in the
  spelling that appears first; the release's own scoring lower-cases labels too, and so does our option parser);
  options are sorted case-insensitively. Each option must read back as itself through
  :func:`ub_core.parsing.parse_option`, else the uid is refused (two labels a reply could not tell apart);
- shuffle items: compared as the permutation parser compares them (case-insensitively, numbers by value), ordered
  numbers first, then text; every shuffle of a uid must hold the same items, each once.

Bad input is refused with a one-line :class:`OfficialDataError` that names the file and the uid: null, NaN or
infinite values, values of mixed types, shuffles of different lengths or items, repeated shuffle items, duplicate
uids (in the questions or in the ground truth), files that are not UTF-8 or not JSON.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from ..problems.base import Problem
from ..problems.ksn.release_names import normalise_category, release_folder_info  # noqa: F401 (re-exported)
from ..untrusted import NotRegularFileError, open_regular

__all__ = ["load_official", "load_official_rows", "load_ground_truth", "official_problem", "OfficialDataError",
           "normalise_category", "release_folder_info", "load_answer_mapping", "load_release_truth"]

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("uid", "category", "prompt_text")
class OfficialDataError(ValueError):
    """The release files are missing, unreadable or not in the released schema (one-line message)."""


# ------------------------------------------------------------------------------------------------ reading

def _rows_from_file(path: Path) -> list[dict]:
    suffix = path.suffix.lower()
    try:
        if suffix == ".jsonl":
            rows = []
            for i, line in enumerate(_read_regular(path).decode("utf-8").splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise OfficialDataError(f"{path}:{i}: not valid JSON ({e.msg})") from None
            return rows
        if suffix == ".json":
            data = json.loads(_read_regular(path).decode("utf-8"))
            if isinstance(data, Mapping):
                data = data.get("data", data.get("rows"))
            if not isinstance(data, list):
                raise OfficialDataError(f"{path}: expected a list of question rows")
            return data
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()
    except OSError as e:
        raise OfficialDataError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise OfficialDataError(_not_utf8(path, e)) from None
    except json.JSONDecodeError as e:
        raise OfficialDataError(f"{path}: not valid JSON ({e.msg})") from None
    raise OfficialDataError(f"{path}: unsupported file type {suffix!r} (use .json, .jsonl or .parquet)")


def _read_regular(path: Path) -> bytes:
    """A release file's bytes; only a regular file is opened (a device node or FIFO named like a release file is
    not: :func:`~ub_core.untrusted.open_regular`)."""
    try:
        fd = open_regular(path, follow_links=True)
    except NotRegularFileError:
        raise OfficialDataError(f"{path}: not a regular file") from None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _not_utf8(path: Path, e: UnicodeDecodeError) -> str:
    return f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})"


def load_official_rows(source: str | Path, split: str = "train") -> list[dict]:
    """Question rows from a local file, a local dataset folder, or a Hugging Face dataset id."""
    path = Path(str(source))
    if path.is_file():
        return _rows_from_file(path)
    try:
        from datasets import load_dataset
    except ImportError:
        raise OfficialDataError("loading a dataset folder or hub id needs the 'datasets' package "
                                "(pip install 'unpredictabench[hf]')") from None
    try:
        ds = load_dataset(str(source), split=split)
    except Exception as e:  # datasets raises many types; report one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OfficialDataError(f"cannot load dataset {source!r} (split {split!r}): {first}") from None
    return [dict(r) for r in ds]


class _Pairs(dict):
    """A JSON object that remembers keys it saw twice (json keeps only the last one silently)."""

    def __init__(self, pairs):
        super().__init__()
        self.repeated = []
        for k, v in pairs:
            if k in self:
                self.repeated.append(k)
            self[k] = v


def _read_release_json(path: Path) -> Any:
    """A release JSON file, with repeated keys kept (:class:`_Pairs`); any read or decode error is one
    :class:`OfficialDataError` line naming the file."""
    try:
        return json.loads(_read_regular(path).decode("utf-8"), object_pairs_hook=_Pairs)
    except OSError as e:
        raise OfficialDataError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise OfficialDataError(_not_utf8(path, e)) from None
    except json.JSONDecodeError as e:
        raise OfficialDataError(f"{path}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise OfficialDataError(f"{path}: JSON nested too deep") from None


def load_ground_truth(path: str | Path, empty_ok: bool = False) -> dict[str, list]:
    """The released ``ground_truth_values.json``: ``uid -> values``.

    Accepts the release's list of ``{"uid", "ground_truth_values"}`` rows and a plain ``uid -> values`` mapping.
    A uid given twice is refused (which copy is the truth cannot be told), as are null, NaN or infinite values.
    """
    path = Path(path)
    data = _read_release_json(path)
    if isinstance(data, list):  # the release's layout: rows {"uid": ..., "ground_truth_values": [...]}
        entries, where = [], {}
        for i, row in enumerate(data):
            if not isinstance(row, Mapping) or row.get("uid") in (None, ""):
                raise OfficialDataError(f"{path}: row {i} is not an object with a uid")
            uid = str(row["uid"])
            if uid in where:
                raise OfficialDataError(f"{path}: duplicate uid {uid!r} (rows {where[uid]} and {i})")
            where[uid] = i
            entries.append((uid, row))
    elif isinstance(data, Mapping):
        if data.repeated:
            raise OfficialDataError(f"{path}: duplicate uid {str(data.repeated[0])!r} "
                                    f"({len(data.repeated)} repeated key(s))")
        entries = [(str(uid), vals) for uid, vals in data.items()]
    else:
        raise OfficialDataError(f"{path}: expected a list of uid rows or an object keyed by uid")
    out = {}
    for uid, vals in entries:
        if isinstance(vals, Mapping):
            if getattr(vals, "repeated", None):
                raise OfficialDataError(f"{path}: uid {uid!r}: key {vals.repeated[0]!r} given twice")
            vals = next((vals[k] for k in ("ground_truth_values", "values", "ground_truth") if k in vals), None)
        if not isinstance(vals, list) or not vals:
            raise OfficialDataError(f"{path}: ground truth for uid {uid!r} must be a non-empty list")
        bad = _first_bad_value(vals, empty_ok)
        if bad:
            raise OfficialDataError(f"{path}: uid {uid!r}: {bad}")
        out[uid] = vals
    return out


# ------------------------------------------------------------------------------------------------ release layout

ANSWER_TYPES = ("single_item_selection", "selection_separated_by_new_line", "shuffling_separated_by_new_line")
MAPPING_FILE = "realworld_mapping.json"
VALUES_FILE = "ground_truth_values.json"


def load_answer_mapping(path: str | Path) -> dict[str, dict]:
    """The release's ``realworld_mapping.json``: ``uid -> {"answer_type", "metadata"}``.

    Its top-level keys are the answer types (single item selection, selection separated by new lines, shuffling
    separated by new lines), each with a list of ``{"value": uid, "metadata": {...}}`` under ``uids`` (spelled
    ``"uids:"`` in the release). Selections carry ``metadata.mapping`` (outcome -> code; ``null`` for numeric
    answers, which stay numbers), shuffles ``metadata.number_of_lines``."""
    path = Path(path)
    data = _read_release_json(path)
    if not isinstance(data, Mapping):
        raise OfficialDataError(f"{path}: expected an object keyed by answer type")
    out: dict[str, dict] = {}
    for kind, block in data.items():
        if kind not in ANSWER_TYPES:
            raise OfficialDataError(f"{path}: unknown answer type {kind!r} (known: {', '.join(ANSWER_TYPES)})")
        entries = block.get("uids", block.get("uids:")) if isinstance(block, Mapping) else None
        if not isinstance(entries, list):
            raise OfficialDataError(f"{path}: {kind}: expected a list of uids")
        for i, e in enumerate(entries):
            if not isinstance(e, Mapping) or e.get("value") in (None, ""):
                raise OfficialDataError(f"{path}: {kind}: entry {i} is not an object with a uid 'value'")
            uid = str(e["value"])
            if uid in out:
                raise OfficialDataError(f"{path}: uid {uid!r} listed twice ({out[uid]['answer_type']}, {kind})")
            meta = e.get("metadata") or {}
            mapping = meta.get("mapping") if isinstance(meta, Mapping) else None
            if mapping is not None and (not isinstance(mapping, Mapping) or not mapping):
                raise OfficialDataError(f"{path}: uid {uid!r}: mapping must be a non-empty object")
            out[uid] = {"answer_type": kind, "metadata": dict(meta) if isinstance(meta, Mapping) else {}}
    return out


def _find_mapping(start: Path) -> Path | None:
    """``realworld_mapping.json`` in ``start`` or up to three folders above it (the release root)."""
    for d in [start, *list(start.parents)[:3]]:
        if (d / MAPPING_FILE).is_file():
            return d / MAPPING_FILE
    return None


def load_release_truth(path: str | Path, mapping: str | Path | None = None
                       ) -> tuple[dict[str, list], dict[str, str], dict[str, dict]]:
    """Ground truth of a release: ``(uid -> values, uid -> task folder, uid -> answer mapping entry)``.

    ``path`` is a ``ground_truth_values.json`` file (see :func:`load_ground_truth`), or a folder in the release
    layout: ``<folder>/ground_truth_values.json`` per task folder, directly or under ``ground_truth_values/``
    (what ``ub official truth --out`` writes). ``mapping``: ``realworld_mapping.json``; by default it is looked for
    next to ``path`` and up to three folders above. A uid in two task folders is refused."""
    path = Path(path)
    folders: dict[str, str] = {}
    if path.is_dir():
        root = path / "ground_truth_values" if (path / "ground_truth_values").is_dir() else path
        files = sorted(p for p in root.glob(f"*/{VALUES_FILE}") if p.is_file())
        if (root / VALUES_FILE).is_file():
            files.insert(0, root / VALUES_FILE)
        if not files:
            raise OfficialDataError(f"{path}: no <task folder>/{VALUES_FILE} files (the release's ground_truth_values "
                                    "layout, or what `ub official truth --out` writes)")
        truth: dict[str, list] = {}
        where: dict[str, Path] = {}
        for f in files:
            for uid, vals in load_ground_truth(f, empty_ok=True).items():
                if uid in truth:
                    raise OfficialDataError(f"uid {uid!r} is in both {where[uid]} and {f}")
                truth[uid], where[uid] = vals, f
                if f.parent != root:
                    folders[uid] = f.parent.name
        search = path
    elif path.is_file() or not path.exists():
        truth = load_ground_truth(path, empty_ok=True)
        search = path.parent
        if path.name == VALUES_FILE and path.parent.name and path.parent.parent.name == "ground_truth_values":
            folders = {uid: path.parent.name for uid in truth}
    else:
        raise OfficialDataError(f"{path}: not a file or folder")
    found = Path(mapping) if mapping else _find_mapping(search.resolve())
    answers = load_answer_mapping(found) if found else {}
    return truth, folders, answers


# ------------------------------------------------------------------------------------------------ mapping

def _is_number(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer too large for a float
        return False


def _describe_bad(v: Any, empty_ok: bool = False) -> str | None:
    """Why a scalar ground-truth value (or shuffle item) is unusable, or None (``empty_ok``: an empty label is a
    value, the release's "(no output)" draw)."""
    if v is None:
        return "is null"
    if isinstance(v, (bool, np.bool_)):
        return f"is a boolean ({v})"
    if isinstance(v, (int, float, np.integer, np.floating)) and not _is_number(v):
        return f"is not a finite number ({v!r})" if not isinstance(v, int) else "is an integer too large for a float"
    if isinstance(v, str) and not v.strip() and not empty_ok:
        return "is an empty string"
    if isinstance(v, Mapping):
        return "is an object"
    if not isinstance(v, (str, int, float, np.integer, np.floating)):
        return f"is a {type(v).__name__}"
    return None


_PLAIN_NUMBERS = (int, float)


def _plainly_good(values: list, empty_ok: bool) -> bool:
    """True for the common shapes that are certainly good (plain finite floats or ints, non-empty labels, non-empty
    lists of those), checked at C speed; False means "look value by value" (:func:`_first_bad_value`)."""
    try:
        kind = type(values[0]) if values else None
        if kind in _PLAIN_NUMBERS:
            return all(type(v) in _PLAIN_NUMBERS for v in values) and all(map(math.isfinite, values))
        if kind is str:
            return all(type(v) is str for v in values) and (empty_ok or all(map(str.strip, values)))
        if kind is list:
            return all(type(v) is list and v for v in values) and all(
                (type(x) in _PLAIN_NUMBERS and math.isfinite(x)) or (type(x) is str and x.strip())
                for v in values for x in v)
    except OverflowError:  # an integer too large for a float
        return False
    return False


def _first_bad_value(values: list, empty_ok: bool = False) -> str | None:
    """The first null / NaN / infinite / empty value of a ground-truth list (items of shuffles included;
    ``empty_ok``: empty labels, not shuffle items, are allowed)."""
    if _plainly_good(values, empty_ok):
        return None
    for i, v in enumerate(values):
        if isinstance(v, list):
            for j, x in enumerate(v):
                why = _describe_bad(x)
                if why:
                    return f"item {j} of ground-truth value {i} {why}"
            if not v:
                return f"ground-truth value {i} is an empty list"
            continue
        why = _describe_bad(v, empty_ok)
        if why:
            return f"ground-truth value {i} {why}"
    return None


def _snip(text: Any, n: int = 40) -> str:
    t = " ".join(str(text).split())
    return repr(t if len(t) <= n else t[: n - 3] + "...")


def _label_key(label: str):
    """When two released labels are the same option: case and spacing ignored, as the option parser does
    (multi-line printed outputs compare token by token, commas and semicolons being separators too)."""
    if "\n" in label.strip():
        return tuple(t for t in re.split(r"[\s,;]+", label.casefold()) if t)
    return " ".join(label.split()).casefold()


def _categorical_codes(uid: str, values: list, known: Iterable[str] | None = None
                       ) -> tuple[tuple[str, ...], np.ndarray]:
    """Options (sorted case-insensitively, first-seen spelling) and the code of each value. ``known``: the
    release's list of possible outcomes (``realworld_mapping.json``); every value must be one of them, and outcomes
    absent from the sample are options too."""
    from ..parsing import parse_option

    spelling: dict[Any, str] = {}
    variants: dict[Any, set] = {}
    if known is not None:
        for o in known:
            spelling.setdefault(_label_key(o), o.strip())
        allowed = set(spelling)
        odd = next((v for v in values if _label_key(v) not in allowed), None)
        if odd is not None:
            raise OfficialDataError(f"uid {uid!r}: value {_snip(odd)} is not an outcome listed in the answer mapping")
    for v in values:
        k = _label_key(v)
        spelling.setdefault(k, v.strip())
        variants.setdefault(k, set()).add(v.strip())
    keys = sorted(spelling, key=lambda k: (str(k), spelling[k]))
    options = tuple(spelling[k] for k in keys)
    code = {k: i for i, k in enumerate(keys)}
    merged = {k: vs for k, vs in variants.items() if len(vs) > 1}
    if merged:
        example = min(sorted(vs) for vs in merged.values())
        log.warning("uid %r: %d label(s) come in spellings that differ only in case or spacing; each is scored "
                    "as one option (e.g. %s)", uid, len(merged), " / ".join(map(_snip, example[:3])))
    for i, o in enumerate(options):  # a reply that copies a label must read back as that label's code
        got = parse_option(o, options)
        if not got.ok or int(got.value) != i:
            other = options[int(got.value)] if got.ok else None
            why = f"reads as option {_snip(other)}" if other is not None else f"does not read back ({got.error})"
            raise OfficialDataError(f"uid {uid!r}: label {_snip(o)} {why}; the options cannot be told apart")
    return options, np.asarray([code[_label_key(v)] for v in values], dtype=float)


def _permutation_codes(uid: str, values: list) -> tuple[tuple[str, ...], np.ndarray]:
    """Items (the parser's order: numbers by value, then text case-insensitively) and Z1 of each shuffle."""
    from ..metrics import lehmer_z1_many
    from ..parsing.permutations import _item_key

    first: dict[Any, str] = {}
    rows, reference = [], set()
    for i, perm in enumerate(values):
        keys = [_item_key(x) for x in perm]
        seen: dict[Any, Any] = {}
        for k, x in zip(keys, perm):
            if k in seen:
                raise OfficialDataError(f"uid {uid!r}: shuffle {i} repeats item {_snip(x)}"
                                        + (f" (as {_snip(seen[k])})" if str(seen[k]) != str(x) else ""))
            seen[k] = x
            first.setdefault(k, str(x).strip())
        if i == 0:
            reference = set(keys)
        elif len(perm) != len(values[0]):
            raise OfficialDataError(f"uid {uid!r}: shuffle {i} has {len(perm)} items, shuffle 0 has "
                                    f"{len(values[0])}")
        elif set(keys) != reference:
            odd = next(x for k, x in zip(keys, perm) if k not in reference)
            raise OfficialDataError(f"uid {uid!r}: shuffle {i} has item {_snip(odd)}, which shuffle 0 lacks")
        rows.append(keys)
    order = sorted(reference)
    index = {k: j for j, k in enumerate(order)}
    codes = np.asarray([[index[k] for k in keys] for keys in rows], dtype=np.int64)
    return tuple(first[k] for k in order), lehmer_z1_many(codes)


def official_problem(row: Mapping, values: list, folder: str | None = None,
                     answer: Mapping | None = None) -> Problem:
    """Map one released row and its ground-truth values onto a :class:`Problem` (see the module docstring for how
    labels and shuffle items get their codes).

    ``folder``: the release's task folder of the uid (sets category, regime and modality, see
    :func:`release_folder_info`); ``answer``: its ``realworld_mapping.json`` entry ``{"answer_type", "metadata"}``
    (see :func:`load_answer_mapping`), which decides how values and replies are read."""
    uid = str(row["uid"])
    info = release_folder_info(folder) if folder else None
    category = info["category"] if info else normalise_category(row.get("category"))
    answer_type = answer.get("answer_type") if answer else None
    meta = dict(answer.get("metadata") or {}) if answer else {}
    common = dict(id=uid, bank="official", category=category, task_type=category,
                  subcategory=(str(row["subcategory"]) if row.get("subcategory") not in (None, "") else None),
                  regime=info["regime"] if info else "none",
                  modality=(info["modality"] if info else "multimodal" if category == "multimodal" else "unimodal"),
                  prompt=str(row["prompt_text"]), append_instruction=False,
                  metadata={"source_id": row.get("id"), "prompt_title": row.get("prompt_title"),
                            "release_folder": folder, "answer_type": answer_type})
    known = None
    if answer_type == "shuffling_separated_by_new_line":
        # each draw is one printout, its lines the shuffled items
        values = [v.split("\n") if isinstance(v, str) else v for v in values]
        values = [[x.strip() for x in v] if isinstance(v, list) else v for v in values]
        n_lines = meta.get("number_of_lines")
        if n_lines is not None:
            odd = next((i for i, v in enumerate(values) if isinstance(v, list) and len(v) != int(n_lines)), None)
            if odd is not None:
                raise OfficialDataError(f"uid {uid!r}: shuffle {odd} has {len(values[odd])} lines, the answer "
                                        f"mapping says {n_lines}")
    elif answer_type in ("single_item_selection", "selection_separated_by_new_line") and meta.get("mapping"):
        known = [str(k) for k in meta["mapping"]]
        empty = next((k for k in known if k.strip().casefold() == "(no output)"), None)
        # labels: numbers printed as outcomes are labels too; an empty printout is the "(no output)" outcome
        values = [(empty if empty is not None and isinstance(v, str) and not v.strip() else
                   str(v) if _is_number(v) else v) for v in values]
    bad = _first_bad_value(values)
    if bad:
        raise OfficialDataError(f"uid {uid!r}: {bad}")
    if known is not None:
        if not all(isinstance(v, str) for v in values):
            raise OfficialDataError(f"uid {uid!r}: a {answer_type} answer needs label values")
        options, scored = _categorical_codes(uid, values, known)
        support, fmt_, family = "categorical", "option", "categorical"
        params = {"labels": list(options)}
    elif all(_is_number(v) for v in values):
        arr = np.asarray(values, dtype=float)
        integer = bool(np.all(arr == np.round(arr)))
        support = "discrete" if integer else "continuous"
        fmt_, options, scored = ("integer" if integer else "number"), (), arr
        family, params = "empirical", {"n_values": int(arr.size)}
    elif all(isinstance(v, str) for v in values):
        options, scored = _categorical_codes(uid, values)
        support, fmt_, family = "categorical", "option", "categorical"
        params = {"labels": list(options)}
    elif all(isinstance(v, list) and v for v in values):
        options, scored = _permutation_codes(uid, values)
        support, fmt_, family = "permutation", "permutation", "uniform_permutation"
        params = {"n": len(options), "items": list(options)}
    else:
        kinds = sorted({type(v).__name__ for v in values})
        raise OfficialDataError(f"uid {uid!r}: ground-truth values mix types ({', '.join(kinds)}); expected all "
                                "numbers, all strings or all lists")
    reference = scored.copy()
    reference.setflags(write=False)

    def sampler(rng, size, _ref=reference):
        # The release is a fixed reference sample: return it (capped at its length), ignoring the seed.
        return _ref[: int(size)].copy() if size < _ref.size else _ref.copy()

    low = float(reference.min()) if support == "categorical" else -math.inf
    high = float(reference.max()) if support == "categorical" else math.inf
    if support == "permutation":
        low, high = 0.0, 1.0
    return Problem(family=family, params=params, support=support, answer_format=fmt_, options=options,
                   sampler=sampler, low=low, high=high, **common)


def load_official(source: str | Path, ground_truth: str | Path, split: str = "train",
                  categories: Iterable[str] | None = None, mapping: str | Path | None = None) -> list[Problem]:
    """Problems of the official release: questions from ``source``, reference values from ``ground_truth`` (a
    ``ground_truth_values.json`` or a folder in the release layout, see :func:`load_release_truth`), answers read
    as ``realworld_mapping.json`` says (``mapping``, found next to the ground truth by default)."""
    rows = load_official_rows(source, split=split)
    truth, folders, answers = load_release_truth(ground_truth, mapping)
    wanted = {normalise_category(c) for c in categories} if categories else None
    problems, where = [], {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise OfficialDataError(f"{source}: row {i}: expected an object")
        missing = [c for c in REQUIRED_COLUMNS if row.get(c) in (None, "")]
        if missing:
            raise OfficialDataError(f"{source}: row {i}: missing column(s) {', '.join(missing)}")
        uid = str(row["uid"])
        if uid in where:
            raise OfficialDataError(f"{source}: duplicate uid {uid!r} (rows {where[uid]} and {i})")
        where[uid] = i
        if uid not in truth:
            raise OfficialDataError(f"{source}: row {i}: no ground truth for uid {uid!r} in {ground_truth}")
        try:
            p = official_problem(row, truth[uid], folder=folders.get(uid), answer=answers.get(uid))
        except OfficialDataError as e:
            raise OfficialDataError(f"{ground_truth}: {e}") from None
        if wanted is None or p.category in wanted:
            problems.append(p)
    return problems
