"""Build the release's ``ground_truth_values`` from its ground-truth programs, safely (``ub official truth``).

The public UnpredictaBench release ships one Python program per problem, ``ground_truth_codes/<task folder>/<uid>.py``,
each printing a list of 10,000 reference draws (numbers, labels, or lists for shuffles). The reference values are
kept as ``ground_truth_values/<task folder>/ground_truth_values.json``: a JSON list of
``{"uid": ..., "ground_truth_values": [...]}`` records, one file per task folder. This module runs those programs and
writes that layout, so a user holding the release can rebuild (or check) the values.

Those programs are third-party code, so they run only when the user says they trust the release
(``trust_release_code=True`` / ``--trust-release-code``), and then each runs

- in its own subprocess ``python -I`` (isolated mode: no ``PYTHON*`` variables, no user site, no script folder on
  ``sys.path``), in its own session / process group;
- in an empty temporary working directory, which is also its ``HOME`` and ``TMPDIR`` and is deleted afterwards;
- with a scrubbed environment: only ``PATH``, ``LANG``, ``LC_ALL``, ``LC_CTYPE``, ``TZ`` are passed on (no tokens, no
  proxies, no credentials), BLAS thread counts pinned to 1;
- under rlimits set in ``preexec_fn``: CPU seconds (``RLIMIT_CPU``), address space (``RLIMIT_AS``), output file size
  (``RLIMIT_FSIZE``, which caps stdout/stderr, written to files in the temporary folder) and no core dumps; and under a
  wall-clock timeout after which the whole process group is killed.

This is process-level isolation, not a jail: a program can still read files its user can read by absolute path and
open network connections. Run untrusted releases in a container.

The printed output is never executed in this process: it is read with :func:`ast.literal_eval` (numpy scalar
reprs such as ``np.float64(1.5)`` are unwrapped first), capped in size, and every value is checked to be a finite
number, a non-empty label, or a list of those (a shuffle). A program that fails (non-zero exit, timeout, limit hit,
unreadable or invalid output, wrong number of values) is reported with its uid and reason and skipped; the others
still run. Work resumes: a uid already in the output folder (in ``ground_truth_values.json`` or as a finished
per-uid part) is not run again.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Limits", "Job", "Outcome", "find_programs", "run_program", "parse_output", "build_truth",
           "VALUES_FILE", "TrustError"]

VALUES_FILE = "ground_truth_values.json"
PARTS_DIR = ".parts"
ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
_UID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_NP_SCALAR = re.compile(r"\b(?:np|numpy)\.(?:float|int|uint|bool|str)_?\d*\(([^()]*)\)")


class TrustError(RuntimeError):
    """Refused: running release programs needs the user's explicit trust."""


@dataclass(frozen=True)
class Limits:
    """Per-program limits. ``n_values``: how many values each program must print (None: any positive number)."""

    wall_s: float = 120.0
    cpu_s: int = 120
    memory_mb: int = 4096
    max_output_mb: float = 64.0
    n_values: int | None = 10_000


@dataclass(frozen=True)
class Job:
    folder: str
    uid: str
    path: Path


@dataclass
class Outcome:
    job: Job
    ok: bool
    reason: str = ""
    values: list | None = field(default=None, repr=False)
    seconds: float = 0.0


# ------------------------------------------------------------------------------------------------ discovery

def find_programs(codes: str | Path) -> list[Job]:
    """The programs of a release: ``codes`` is the release root (holding ``ground_truth_codes/``), the
    ``ground_truth_codes`` folder itself (task folders of ``<uid>.py``), or one task folder."""
    root = Path(codes)
    if not root.is_dir():
        raise FileNotFoundError(f"--codes {root}: not a folder")
    if (root / "ground_truth_codes").is_dir():
        root = root / "ground_truth_codes"
    if any(p.suffix == ".py" and p.is_file() for p in root.iterdir()):
        folders = [root]
    else:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    jobs = []
    for folder in folders:
        for py in sorted(folder.glob("*.py")):
            if py.is_file():
                jobs.append(Job(folder.name, py.stem, py.resolve()))
    if not jobs:
        raise FileNotFoundError(f"--codes {codes}: no <task folder>/<uid>.py programs found")
    return jobs


# ------------------------------------------------------------------------------------------------ running

def _child_env(home: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(HOME=home, TMPDIR=home, TMP=home, TEMP=home, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMEXPR_NUM_THREADS="1", MPLBACKEND="Agg")
    return env


def _preexec(limits: Limits):
    cpu = max(1, int(limits.cpu_s))
    mem = int(limits.memory_mb) * 1024 * 1024
    fsize = int(limits.max_output_mb * 1024 * 1024) + 1

    def apply():  # runs in the child between fork and exec: plain setrlimit calls only
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_reason(code: int, limits: Limits) -> str:
    sig = -code
    names = {signal.SIGXCPU: f"CPU limit ({limits.cpu_s} s) exceeded",
             signal.SIGKILL: "killed (SIGKILL; CPU or memory limit)",
             signal.SIGXFSZ: f"output larger than {limits.max_output_mb:g} MB",
             signal.SIGSEGV: "crashed (SIGSEGV)"}
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    return names.get(sig, f"killed by {name}")


def _tail(path: Path, n: int = 300) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4096))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return last if len(last) <= n else last[: n - 3] + "..."


def run_program(job: Job, limits: Limits = Limits(), python: str | None = None) -> Outcome:
    """Run one program in isolation and parse what it prints (see the module docstring)."""
    start = time.monotonic()
    work = tempfile.mkdtemp(prefix="ub-truth-")
    try:
        run_dir = Path(work) / "run"
        run_dir.mkdir()
        out_path, err_path = Path(work) / "stdout", Path(work) / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen([python or sys.executable, "-I", str(job.path)], cwd=run_dir,
                                        env=_child_env(str(run_dir)), stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=err, start_new_session=True, preexec_fn=_preexec(limits),
                                        close_fds=True)
            except OSError as e:
                return Outcome(job, False, f"could not start: {e}", seconds=time.monotonic() - start)
            try:
                code = proc.wait(timeout=limits.wall_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.wait()
                return Outcome(job, False, f"timed out after {limits.wall_s:g} s (wall clock); process group killed",
                               seconds=time.monotonic() - start)
            _kill_group(proc)  # leftover children of a finished program
        size = out_path.stat().st_size
        cap = limits.max_output_mb * 1024 * 1024
        if size >= cap:  # RLIMIT_FSIZE stopped the writes (SIGXFSZ, or EFBIG where the signal is ignored)
            return Outcome(job, False, f"output larger than {limits.max_output_mb:g} MB",
                           seconds=time.monotonic() - start)
        if code != 0:
            reason = _signal_reason(code, limits) if code < 0 else f"exited with status {code}"
            last = _tail(err_path)
            return Outcome(job, False, reason + (f": {last}" if last else ""), seconds=time.monotonic() - start)
        try:
            text = out_path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return Outcome(job, False, "output is not UTF-8 text", seconds=time.monotonic() - start)
        try:
            values = parse_output(text, limits.n_values)
        except ValueError as e:
            return Outcome(job, False, str(e), seconds=time.monotonic() - start)
        return Outcome(job, True, values=values, seconds=time.monotonic() - start)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------------ parsing

def _non_finite_name(text: str) -> str | None:
    """``inf`` / ``nan`` printed by a program (bare names, which literal_eval refuses): name them in the reason."""
    m = re.search(r"(?<![\w'\"])-?(inf|nan|Infinity|NaN)(?![\w'\"])", text)
    return m.group(0) if m else None


# CPython 3.11 keeps the AST constructor's recursion depth in per-interpreter state, so two threads parsing at once
# can raise "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905). The workers of
# build_truth parse in threads: one parse at a time (the parse holds the GIL anyway, so nothing is lost).
_AST_LOCK = threading.Lock()


def parse_output(text: str, n_values: int | None = 10_000) -> list:
    """The list a program printed, read without executing anything: the whole output or, failing that, its last
    non-empty line, through :func:`ast.literal_eval`. Raises ``ValueError`` (one line) when it is not a list of
    finite numbers, non-empty labels, or lists of those (all of one kind), or when its length is not ``n_values``."""
    text = text.strip()
    if not text:
        raise ValueError("printed nothing")
    candidates = [text]
    last = text.splitlines()[-1].strip()
    if last != text:
        candidates.append(last)
    parsed, error = None, None
    for cand in candidates:
        cand = _NP_SCALAR.sub(r"\1", cand)
        try:
            with _AST_LOCK:
                parsed = ast.literal_eval(cand)
            break
        except Exception as e:  # SyntaxError, ValueError, MemoryError, RecursionError: all mean "not a literal"
            error = e
    if parsed is None:
        bad = _non_finite_name(text)
        if bad:
            raise ValueError(f"output holds a non-finite value ({bad})")
        raise ValueError(f"output is not a Python literal list ({type(error).__name__})")
    if not isinstance(parsed, (list, tuple)):
        raise ValueError(f"output is a {type(parsed).__name__}, not a list")
    values = [list(v) if isinstance(v, tuple) else v for v in parsed]
    if not values:
        raise ValueError("output is an empty list")
    from .official import _first_bad_value

    bad = _first_bad_value(values)
    if bad:
        raise ValueError(bad)
    kinds = {"list" if isinstance(v, list) else "label" if isinstance(v, str) else "number" for v in values}
    if len(kinds) > 1:
        raise ValueError(f"values mix kinds ({', '.join(sorted(kinds))})")
    if n_values is not None and len(values) != n_values:
        raise ValueError(f"printed {len(values)} values, expected {n_values}")
    return values


# ------------------------------------------------------------------------------------------------ output

def _read_records(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{path}: exists but is not a JSON list of records (a Git LFS pointer?); "
                         "choose another --out") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of {{uid, ground_truth_values}} records")
    return [r for r in data if isinstance(r, dict) and "uid" in r]


def _atomic_write(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj), encoding="utf-8")
    os.replace(tmp, path)


def completed_uids(out: Path, folder: str) -> set[str]:
    """Uids already done for ``folder``: in its values file or as a finished part."""
    done = {str(r["uid"]) for r in _read_records(out / folder / VALUES_FILE)}
    parts = out / folder / PARTS_DIR
    if parts.is_dir():
        done |= {p.stem for p in parts.glob("*.json")}
    return done


def _assemble(out: Path, folder: str) -> int:
    """Merge finished parts into ``<folder>/ground_truth_values.json`` (records sorted by uid); returns its size."""
    target = out / folder / VALUES_FILE
    records = {str(r["uid"]): r for r in _read_records(target)}
    parts = out / folder / PARTS_DIR
    files = sorted(parts.glob("*.json")) if parts.is_dir() else []
    for p in files:
        rec = json.loads(p.read_text(encoding="utf-8"))
        records[str(rec["uid"])] = rec
    if files or not target.exists():
        _atomic_write(target, [records[u] for u in sorted(records)])
    shutil.rmtree(parts, ignore_errors=True)
    return len(records)


@dataclass
class Summary:
    total: int = 0
    skipped: int = 0
    ok: int = 0
    failed: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    files: dict[str, int] = field(default_factory=dict)


def build_truth(codes: str | Path, out: str | Path, *, trust_release_code: bool = False, workers: int = 2,
                limits: Limits = Limits(), progress: bool = True, python: str | None = None,
                log=None) -> Summary:
    """Run every release program not yet done and write ``out/<task folder>/ground_truth_values.json``.

    Refuses (:class:`TrustError`) unless ``trust_release_code``. Failures are collected in the summary, never
    raised; ``log(line)`` receives one line per failure."""
    if not trust_release_code:
        raise TrustError("refusing to run the release's ground-truth programs: they are third-party code; pass "
                         "--trust-release-code if you trust this release")
    t0 = time.monotonic()
    out = Path(out)
    jobs = find_programs(codes)
    bad = [j for j in jobs if not _UID_RE.match(j.uid) or not _UID_RE.match(j.folder)]
    summary = Summary(total=len(jobs))
    for j in bad:
        summary.failed.append(Outcome(j, False, "file or folder name is not a plain uid"))
    jobs = [j for j in jobs if j not in bad]
    done = {f: completed_uids(out, f) for f in {j.folder for j in jobs}}
    todo = [j for j in jobs if j.uid not in done[j.folder]]
    summary.skipped = len(jobs) - len(todo)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc="ground truth", unit="prog", file=sys.stderr, dynamic_ncols=True)
    try:
        with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
            futures = [pool.submit(run_program, j, limits, python) for j in todo]
            for fut in as_completed(futures):
                res = fut.result()
                if res.ok:
                    _atomic_write(out / res.job.folder / PARTS_DIR / f"{res.job.uid}.json",
                                  {"uid": res.job.uid, "ground_truth_values": res.values})
                    summary.ok += 1
                else:
                    summary.failed.append(res)
                    if log:
                        log(f"FAILED {res.job.folder}/{res.job.uid}: {res.reason}")
                res.values = None
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        for folder in sorted({j.folder for j in jobs}):
            summary.files[folder] = _assemble(out, folder)
    summary.seconds = time.monotonic() - t0
    return summary


# ------------------------------------------------------------------------------------------------ CLI

def add_parser(sub) -> None:
    """Register ``official truth`` under the ``ub`` sub-command parser ``sub``."""
    off = sub.add_parser("official", help="tools for the official UnpredictaBench release")
    osub = off.add_subparsers(dest="official_command", required=True)
    tr = osub.add_parser("truth", help="run the release's ground-truth programs safely -> ground_truth_values/")
    tr.add_argument("--codes", required=True, help="release root, its ground_truth_codes/ folder, or one task folder")
    tr.add_argument("--out", required=True, help="output folder (the release's ground_truth_values/ layout)")
    tr.add_argument("--trust-release-code", action="store_true",
                    help="required: you trust the release's programs (they run in isolated subprocesses)")
    tr.add_argument("--workers", type=int, default=2, help="programs run at once (default 2)")
    tr.add_argument("--timeout", type=float, default=Limits.wall_s, help="wall-clock seconds per program")
    tr.add_argument("--cpu-limit", type=int, default=Limits.cpu_s, help="CPU seconds per program")
    tr.add_argument("--memory-mb", type=int, default=Limits.memory_mb, help="address-space limit per program")
    tr.add_argument("--max-output-mb", type=float, default=Limits.max_output_mb, help="stdout size cap")
    tr.add_argument("--n-values", type=int, default=10_000,
                    help="values each program must print (0: any number; default 10000 as in the release)")
    tr.add_argument("--no-progress", action="store_true", help="no progress bar")
    tr.set_defaults(func=cmd_official)


def cmd_official(args) -> int:
    if args.official_command != "truth":
        raise SystemExit(f"unknown official command {args.official_command!r}")
    if not args.trust_release_code:
        print("ub official truth: refusing to run the release's programs (third-party code); "
              "add --trust-release-code if you trust this release", file=sys.stderr)
        return 2
    for name in ("timeout", "cpu_limit", "memory_mb", "max_output_mb", "workers"):
        if getattr(args, name) <= 0:
            print(f"ub official truth: --{name.replace('_', '-')} must be positive", file=sys.stderr)
            return 2
    limits = Limits(wall_s=args.timeout, cpu_s=args.cpu_limit, memory_mb=args.memory_mb,
                    max_output_mb=args.max_output_mb, n_values=args.n_values or None)
    try:
        s = build_truth(args.codes, args.out, trust_release_code=True, workers=args.workers, limits=limits,
                        progress=not args.no_progress, log=lambda line: print(line, file=sys.stderr))
    except (FileNotFoundError, ValueError) as e:
        print(f"ub official truth: {e}", file=sys.stderr)
        return 2
    print(f"{s.total} programs: {s.ok} run, {s.skipped} already done, {len(s.failed)} failed "
          f"({s.seconds:.1f} s)")
    for folder, n in s.files.items():
        print(f"  {Path(args.out) / folder / VALUES_FILE}: {n} uids")
    for f in s.failed:
        print(f"  failed {f.job.folder}/{f.job.uid}: {f.reason}")
    return 1 if s.failed else 0
