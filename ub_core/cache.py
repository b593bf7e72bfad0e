"""On-disk cache of ground-truth reference draws.

Files live under the platform cache directory (``platformdirs.user_cache_dir("unpredictabench")``, or
``$UB_CACHE_DIR`` when set), one ``.npz`` per (bank, bank version, problem id, problem fingerprint, seed, size).
Draws are a pure function of that key, so the cache never has to be trusted: each file holds the draws
(``float64``) and a JSON record of its key (bank, bank version, id, fingerprint, seed, size, dtype) with the
SHA-256 of the draws' bytes. A read checks all of it; a file that is unreadable, empty, truncated, of the old
format (a bare ``.npy`` without checksum), of another problem, of another dtype or whose bytes do not match the
checksum is rebuilt from the sampler, with a warning on the ``ub_core.cache`` logger.

Writes go through a unique temporary file in the same folder and an atomic :func:`os.replace`, so concurrent
writers never leave or read half a file (the last complete write wins; all writers write the same bytes). Files
get the permissions a plain ``open()`` would give (``0o666`` less the process umask), not ``mkstemp``'s 0600.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Iterable

import numpy as np

from .untrusted import NotRegularFileError, open_regular

__all__ = ["cache_dir", "truth_path", "problem_fingerprint", "cached_truth", "build_truth", "CACHE_FORMAT"]

log = logging.getLogger("ub_core.cache")

# Bump when the file layout changes; files of another format are rebuilt.
CACHE_FORMAT = 2
_DTYPE = np.dtype("<f8")


def cache_dir() -> Path:
    env = os.environ.get("UB_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("unpredictabench"))


#: Draws of the sampler probe in :func:`problem_fingerprint` (about 40 microseconds a problem).
SAMPLER_PROBE_SIZE = 64


def problem_fingerprint(problem) -> str:
    """Short digest of what defines a problem's truth, so that no change reads stale draws:

    * what it is: id, family, parameters, support, answer format, options;
    * what its sampler *does*: the bytes of its first :data:`SAMPLER_PROBE_SIZE` draws for seed 0. A change to a
      family's sampler, or to any helper it calls, changes them (keyed on the definition alone, ``truth()`` would
      return stale cached draws after a sampler edit while ``draw()`` returns new ones; a hash of the sampler's source
      would miss a changed helper, and a version number needs someone to bump it)."""
    rec = problem.to_record(with_prompt=False)
    key = {k: rec[k] for k in ("id", "family", "params", "support", "answer_format", "options")}
    probe = np.ascontiguousarray(problem.draw(SAMPLER_PROBE_SIZE, 0), dtype=_DTYPE)
    key["sampler"] = hashlib.sha256(probe.tobytes()).hexdigest()
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]


def truth_path(problem, size: int, seed: int) -> Path:
    return _truth_path(_cache_key(problem, size, seed))


def _truth_path(key: dict) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in key["id"])
    name = f"{safe}__{key['fingerprint']}__seed{key['seed']}__n{key['size']}.npz"
    return cache_dir() / "truth" / f"{key['bank']}-v{key['bank_version']}" / name


def _cache_key(problem, size: int, seed: int) -> dict:
    """What a cache file must say about itself to be used (its checksum is checked separately)."""
    return {"format": CACHE_FORMAT, "bank": problem.bank, "bank_version": str(problem.bank_version),
            "id": problem.id, "fingerprint": problem_fingerprint(problem), "seed": int(seed), "size": int(size),
            "dtype": _DTYPE.str}


def _digest(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def _read(path: Path, key: dict) -> tuple[np.ndarray | None, str | None]:
    """(draws, None) for a valid file; (None, reason) for a missing (reason None) or invalid one."""
    try:
        # opened here, through the gate (a regular file only), so a file numpy cannot read is still closed
        fh = os.fdopen(open_regular(path, follow_links=True), "rb")
    except FileNotFoundError:
        return None, None
    except NotRegularFileError as e:
        return None, f"unreadable ({e})"
    except OSError as e:
        return None, f"unreadable ({type(e).__name__}: {e.strerror or e})"
    with fh:
        try:
            loaded = np.load(fh, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
            return None, f"unreadable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})".strip()
        if isinstance(loaded, np.ndarray):
            return None, "old cache format without checksum"
        try:
            with loaded as z:
                if set(z.files) != {"draws", "meta"}:
                    return None, f"unexpected members {sorted(z.files)}"
                meta_arr = z["meta"]
                arr = z["draws"]
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:
            return None, f"unreadable ({type(e).__name__})"
    try:
        meta = json.loads(str(meta_arr[()]))
    except (ValueError, TypeError, IndexError):
        return None, "unreadable key record"
    if not isinstance(meta, dict):
        return None, "unreadable key record"
    stored_key = {k: meta.get(k) for k in key}
    if stored_key != key:
        diff = ", ".join(f"{k}={meta.get(k)!r} (want {v!r})" for k, v in key.items() if meta.get(k) != v)
        return None, f"key mismatch: {diff}"
    if arr.dtype != _DTYPE or arr.shape != (key["size"],):
        return None, f"draws are {arr.dtype} {arr.shape}, want {_DTYPE} ({key['size']},)"
    if meta.get("sha256") != _digest(arr):
        return None, "checksum mismatch"
    return arr, None


def _umask() -> int:
    """The process umask, read without changing it where the platform allows (``os.umask`` sets it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write(path: Path, arr: np.ndarray, key: dict) -> None:
    """Atomic write: a unique temporary file in the target folder, then ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = json.dumps({**key, "sha256": _digest(arr)}, sort_keys=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, draws=arr, meta=np.array(meta))
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def cached_truth(problem, size: int = 10_000, seed: int = 0) -> np.ndarray:
    """Reference draws for (problem, seed, size), read from the cache (checked) or drawn and stored."""
    size, seed = int(size), int(seed)
    if getattr(problem, "bank_version", None) is None:  # not from a registered bank: nothing keys its draws
        return problem.draw(size, seed)
    key = _cache_key(problem, size, seed)
    path = _truth_path(key)
    arr, reason = _read(path, key)
    if arr is not None:
        return arr
    if reason is not None:
        log.warning("ground-truth cache file %s for %r is invalid (%s); rebuilding it", path, problem.id, reason)
    arr = np.ascontiguousarray(problem.draw(size, seed), dtype=_DTYPE)
    try:
        _write(path, arr, key)
    except OSError as e:  # a read-only cache only costs speed
        log.debug("cannot write ground-truth cache %s: %s", path, e)
    else:
        try:  # the format-1 file of the same key (a bare .npy, no checksum) is never read again
            path.with_suffix(".npy").unlink()
        except OSError:
            pass
    return arr


def build_truth(problems: Iterable, size: int = 10_000, seed: int = 0, progress: bool = True) -> dict[str, np.ndarray]:
    """Fill the cache for ``problems``; a progress bar appears when the build runs longer than half a second."""
    problems = list(problems)
    try:
        from tqdm import tqdm

        it = tqdm(problems, desc="ground truth", unit="problem", delay=0.5,
                  disable=not progress or not sys.stderr.isatty(), leave=False)
    except ImportError:  # pragma: no cover - tqdm is a dependency
        it = problems
    t0 = time.perf_counter()
    out = {p.id: cached_truth(p, size=size, seed=seed) for p in it}
    build_truth.last_seconds = time.perf_counter() - t0
    return out
