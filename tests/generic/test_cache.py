"""The ground-truth cache checks what it reads: corrupt, foreign, old-format or empty files are rebuilt."""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import threading
import zipfile

import numpy as np
import pytest

from ub_core import cache
from ub_core.cache import cached_truth, truth_path
from ub_core.problems import get_problem
from ub_core.problems.base import Problem

SIZE, SEED = 512, 3
PID, OTHER = "te-normal-conc", "te-normal-spread"
_REAL_DRAW = Problem.draw


@pytest.fixture()
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("UB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture()
def draws(monkeypatch):
    """Counts calls of Problem.draw, so a test can tell a cache hit from a rebuild."""
    calls = []
    real = _REAL_DRAW

    def counting(self, size, seed=0):
        if size != cache.SAMPLER_PROBE_SIZE:  # the fingerprint's sampler probe is not a truth build
            calls.append((self.id, size, seed))
        return real(self, size, seed)

    monkeypatch.setattr(Problem, "draw", counting)
    return calls


def _fresh(pid=PID, size=SIZE, seed=SEED):
    return _REAL_DRAW(get_problem(pid), size, seed)


def _members(path):
    """(draws, meta dict or None) of a cache file in whatever format it is."""
    loaded = np.load(path, allow_pickle=False)
    if isinstance(loaded, np.ndarray):
        return loaded, None
    with loaded as z:
        return z["draws"], json.loads(str(z["meta"][()]))


def _rewrite_draws(path, new):
    """Replace the draws of a cache file, keeping its key record and checksum (as a corruption would)."""
    _, meta = _members(path)
    with open(path, "wb") as fh:
        if meta is None:
            np.save(fh, new)
        else:
            np.savez(fh, draws=new, meta=np.array(json.dumps(meta)))


def _flip_bit(path):
    arr, _ = _members(path)
    raw = bytearray(path.read_bytes())
    at = bytes(raw).find(arr.tobytes())
    assert at > 0
    raw[at + 8 * (SIZE // 2) + 3] ^= 0x10
    path.write_bytes(bytes(raw))


CORRUPTIONS = {
    "bit_flip": _flip_bit,
    "zeros": lambda path: _rewrite_draws(path, np.zeros(SIZE)),
    "float32": lambda path: _rewrite_draws(path, _members(path)[0].astype(np.float32)),
    "truncated": lambda path: path.write_bytes(path.read_bytes()[: path.stat().st_size // 2]),
    "zero_byte": lambda path: path.write_bytes(b""),
    "old_format_npy": lambda path: np.save(open(path, "wb"), _fresh()),
    "not_a_cache_file": lambda path: path.write_bytes(b"PK\x03\x04 this is not a zip archive at all"),
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_corrupt_file_is_rebuilt(cache_env, draws, caplog, kind):
    p = get_problem(PID)
    first = cached_truth(p, SIZE, SEED)
    path = truth_path(p, SIZE, SEED)
    assert path.is_file() and len(draws) == 1
    CORRUPTIONS[kind](path)
    with caplog.at_level(logging.WARNING, logger="ub_core.cache"):
        got = cached_truth(p, SIZE, SEED)
    assert got.dtype == np.float64 and np.array_equal(got, _fresh()) and np.array_equal(got, first)
    assert len(draws) == 2, "the corrupt file must be rebuilt from the sampler"
    assert any("rebuilding" in r.getMessage() and PID in r.getMessage() for r in caplog.records)
    # the rebuilt file is valid: the next read is a hit
    assert np.array_equal(cached_truth(p, SIZE, SEED), first) and len(draws) == 2


def test_another_problems_file_copied_in_is_rebuilt(cache_env, draws, caplog):
    p, q = get_problem(PID), get_problem(OTHER)
    cached_truth(p, SIZE, SEED)
    cached_truth(q, SIZE, SEED)
    shutil.copyfile(truth_path(q, SIZE, SEED), truth_path(p, SIZE, SEED))
    with caplog.at_level(logging.WARNING, logger="ub_core.cache"):
        got = cached_truth(p, SIZE, SEED)
    assert np.array_equal(got, _fresh()) and not np.array_equal(got, _fresh(OTHER))
    assert len(draws) == 3 and "key mismatch" in caplog.text


@pytest.mark.parametrize("field,value", [("seed", SEED + 1), ("size", SIZE + 1), ("fingerprint", "0" * 12),
                                         ("dtype", "<f4"), ("id", OTHER)])
def test_key_record_is_checked(cache_env, draws, field, value):
    p = get_problem(PID)
    cached_truth(p, SIZE, SEED)
    path = truth_path(p, SIZE, SEED)
    arr, meta = _members(path)
    meta[field] = value
    with open(path, "wb") as fh:
        np.savez(fh, draws=arr, meta=np.array(json.dumps(meta)))
    assert np.array_equal(cached_truth(p, SIZE, SEED), _fresh()) and len(draws) == 2


def test_file_stores_key_and_checksum(cache_env):
    p = get_problem(PID)
    arr = cached_truth(p, SIZE, SEED)
    stored, meta = _members(truth_path(p, SIZE, SEED))
    import hashlib

    assert meta["sha256"] == hashlib.sha256(arr.tobytes()).hexdigest()
    assert {k: meta[k] for k in ("id", "seed", "size", "dtype")} == {"id": PID, "seed": SEED, "size": SIZE,
                                                                    "dtype": "<f8"}
    assert meta["fingerprint"] == cache.problem_fingerprint(p) and np.array_equal(stored, arr)


def test_hit_does_not_redraw(cache_env, draws):
    p = get_problem(PID)
    a = cached_truth(p, SIZE, SEED)
    b = cached_truth(p, SIZE, SEED)
    assert np.array_equal(a, b) and len(draws) == 1


def test_legacy_npy_sibling_is_removed(cache_env):
    p = get_problem(PID)
    legacy = truth_path(p, SIZE, SEED).with_suffix(".npy")
    legacy.parent.mkdir(parents=True)
    np.save(legacy, np.zeros(SIZE))
    assert np.array_equal(cached_truth(p, SIZE, SEED), _fresh())
    assert not legacy.exists()


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_files_honour_the_umask(cache_env, umask, mode):
    old = os.umask(umask)
    try:
        cached_truth(get_problem(PID), SIZE, SEED)
        got = stat.S_IMODE(truth_path(get_problem(PID), SIZE, SEED).stat().st_mode)
        seen = cache._umask()
    finally:
        os.umask(old)
    assert got == mode and seen == umask


def test_concurrent_writers_and_readers(cache_env):
    """Writers racing on one key never expose a partial file; no temporary files are left behind."""
    p = get_problem(PID)
    path, key = truth_path(p, SIZE, SEED), cache._cache_key(p, SIZE, SEED)
    want = _fresh()
    errors, stop = [], threading.Event()

    def writer():
        try:
            for _ in range(15):
                cache._write(path, want, key)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    def reader():
        while not stop.is_set():
            arr, reason = cache._read(path, key)
            if reason is not None or (arr is not None and not np.array_equal(arr, want)):
                errors.append(reason or "wrong draws")

    threads = [threading.Thread(target=writer) for _ in range(4)]
    r = threading.Thread(target=reader)
    r.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    r.join()
    assert errors == []
    assert [f.name for f in path.parent.iterdir()] == [path.name]
    assert zipfile.is_zipfile(path)


def test_unwritable_cache_still_returns_draws(cache_env, monkeypatch):
    def refuse(*a, **k):
        raise PermissionError("read-only")

    monkeypatch.setattr(cache.tempfile, "mkstemp", refuse)
    assert np.array_equal(cached_truth(get_problem(PID), SIZE, SEED), _fresh())


def test_a_changed_sampler_never_reads_the_old_draws(cache_env):
    """The fingerprint hashed id, family and params only, so after a sampler changed ``truth()`` returned
    the old cached draws while ``draw()`` returned new ones. The fingerprint now holds what the sampler does."""
    import dataclasses

    p = get_problem(PID)
    old = cached_truth(p, SIZE, SEED)
    changed = dataclasses.replace(p, sampler=lambda rng, n: rng.normal(5.0, 1.0, n))
    new = cached_truth(changed, SIZE, SEED)
    assert np.array_equal(new, _REAL_DRAW(changed, SIZE, SEED)) and not np.array_equal(new, old)
    assert np.array_equal(cached_truth(p, SIZE, SEED), old)  # the original sampler still reads its own file
    assert truth_path(changed, SIZE, SEED) != truth_path(p, SIZE, SEED)
