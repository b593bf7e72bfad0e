"""Build the release's ``ground_truth_values`` from its ground-truth programs, in a jail (``ub official truth``).

Design notes: docs/design/official-truth.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .jail import NOT_PROTECTED, JailError, Sandbox, prepare
from .jail import run as run_jailed
from .official_output import OutputReader, parse_output  # parse_output: part of this module's API
from .outdir import Folder, OutDir, RefusedPath, TooLarge
from ..untrusted import NotRegularFileError, open_regular
from ..terminal import escape_controls

__all__ = ["Limits", "Job", "Outcome", "find_programs", "run_program", "parse_output", "build_truth",
           "VALUES_FILE", "RECORDS_DIR", "TrustError", "JailError", "values_sha256", "verified_records"]

VALUES_FILE = "ground_truth_values.json"
RECORDS_DIR = ".records"
LOCK_FILE = ".ub-official-truth.lock"  # in --out: held (flock) by the run writing there
MAX_RECORD_BYTES = 100 * 1024 * 1024  # bounded at acceptance: a larger record fails its program, never written
_UID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MB = 1024 * 1024


class TrustError(RuntimeError):
    """Refused: running release programs needs the user's explicit trust."""


@dataclass(frozen=True)
class Limits:
    """Limits of one program, all of its processes together (see :mod:`.jail` for how each is enforced).

    ``n_values``: how many values it must print (None: any positive number, at most 1,000,000);
    ``max_output_mb``: its stdout; ``max_procs``: tasks (processes and threads); ``scratch_mb`` and ``max_files``:
    its private ``/tmp`` and ``/dev/shm``."""

    wall_s: float = 120.0
    cpu_s: int = 120
    memory_mb: int = 4096
    max_output_mb: float = 64.0
    n_values: int | None = 10_000
    max_procs: int = 32
    scratch_mb: int = 256
    max_files: int = 4096


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
    program_sha256: str = ""
    values_sha256: str = ""

    def line(self) -> str:
        """``folder/uid: reason``, safe to print (control characters escaped)."""
        return f"{escape_controls(self.job.folder)}/{escape_controls(self.job.uid)}: {escape_controls(self.reason)}"


# ------------------------------------------------------------------------------------------------ discovery

def programs_root(codes: str | Path) -> Path:
    """The folder holding the programs' task folders (or the one task folder) that ``codes`` names: the release
    root's ``ground_truth_codes/``, that folder itself, or one task folder; resolved."""
    root = Path(codes)
    if not root.is_dir():
        raise FileNotFoundError(f"--codes {escape_controls(root)}: not a folder")
    root = Path(os.path.realpath(root))  # realpath: a link loop is an error below, not a crash
    return root / "ground_truth_codes" if (root / "ground_truth_codes").is_dir() else root


def find_programs(codes: str | Path) -> list[Job]:
    """The programs of a release: ``codes`` is the release root (holding ``ground_truth_codes/``), the
    ``ground_truth_codes`` folder itself (task folders of ``<uid>.py``), or one task folder."""
    root = programs_root(codes)
    if any(p.suffix == ".py" and p.is_file() for p in root.iterdir()):
        folders = [root]
    else:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    jobs = []
    for folder in folders:
        for py in sorted(folder.glob("*.py")):
            if py.is_symlink() or not py.is_dir():  # links and special files are refused when they would run
                jobs.append(Job(folder.name, py.stem, py))
    if not jobs:
        raise FileNotFoundError(f"--codes {escape_controls(codes)}: no <task folder>/<uid>.py programs found")
    return jobs


# ------------------------------------------------------------------------------------------------ running

MAX_PROGRAM_BYTES = 16 * _MB


def program_sha256(path: Path) -> str:
    """SHA-256 of a program file; ``ValueError`` (one line) for anything but a regular file of at most 16 MB in a
    folder that is not a link: a link could point the jail at (and bind read-only) a folder of the user's. Only a
    regular file is ever opened (:func:`~ub_core.untrusted.open_regular`): a device node is not."""
    if path.parent.is_symlink():
        raise ValueError("its task folder is a symbolic link (not followed)")
    try:
        fd = open_regular(path)
    except NotRegularFileError as e:
        raise ValueError("the program is a symbolic link (not followed)" if str(e) == "a symbolic link"
                         else "the program is not a regular file") from None
    except OSError as e:
        raise ValueError(f"cannot read the program: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size > MAX_PROGRAM_BYTES:
            raise ValueError(f"the program is larger than {MAX_PROGRAM_BYTES // _MB} MB")
        return hashlib.sha256(f.read(MAX_PROGRAM_BYTES + 1)).hexdigest()


def _readable_by_others(path: Path) -> bool:
    try:
        return (os.stat(path.parent).st_mode & 0o005 == 0o005) and (os.lstat(path).st_mode & 0o004 == 0o004)
    except OSError:
        return False


def values_sha256(values: list) -> str:
    """SHA-256 of a values list in its canonical JSON form (what the records store): ``json.dumps(values,
    separators=(",", ":"))``, hashed a value at a time. The whole text at once, ASCII-escaped, was three times a
    record of astral labels (a 62 MB record of emoji made a 186 MB string and its 186 MB encoding)."""
    h = hashlib.sha256(b"[")
    for i, v in enumerate(values):
        h.update((("," if i else "") + json.dumps(v, separators=(",", ":"), allow_nan=False)).encode("utf-8"))
    h.update(b"]")
    return h.hexdigest()


def _signal_reason(sig: int, limits: Limits) -> str:
    names = {signal.SIGXCPU: f"CPU limit ({limits.cpu_s} s) exceeded",
             signal.SIGKILL: "killed (SIGKILL)",
             signal.SIGXFSZ: f"wrote a file larger than {limits.scratch_mb:g} MB",
             signal.SIGSEGV: "crashed (SIGSEGV)"}
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = f"signal {sig}"
    return names.get(sig, f"killed by {name}")


def _last_line(tail: bytes, n: int = 300) -> str:
    # split at newlines only: a CR (which would overwrite the terminal line) stays in, escaped
    lines = [ln.strip() for ln in tail.decode("utf-8", "replace").split("\n") if ln.strip()]
    return escape_controls(lines[-1], n) if lines else ""


def run_program(job: Job, limits: Limits = Limits(), python: str | None = None,
                sandbox: Sandbox | None = None) -> Outcome:
    """Run one program in the jail (``sandbox``, from :func:`.jail.prepare`; made here when None, which
    raises :class:`JailError` where no jail can be made) and read what it prints."""
    start = time.monotonic()
    sandbox = sandbox or prepare(python)
    try:
        program_sha = program_sha256(job.path)
    except ValueError as e:
        return Outcome(job, False, str(e))
    if sandbox.jailed and sandbox.drop_base is not None and not _readable_by_others(job.path):
        return Outcome(job, False, "the program or its folder cannot be read by other users, and as root the jail "
                                   "runs it as a throwaway uid: make them readable (chmod o+r, folder o+rx)",
                       program_sha256=program_sha)
    reader = OutputReader(limits.n_values)
    res = run_jailed(sandbox, job.path, limits, max_stdout=int(limits.max_output_mb * _MB), on_stdout=reader.feed)

    def failed(reason: str) -> Outcome:
        return Outcome(job, False, escape_controls(reason), seconds=time.monotonic() - start,
                       program_sha256=program_sha)

    if res.limit:
        return failed(res.limit)
    if res.returncode != 0:
        reason = _signal_reason(res.signal, limits) if res.signal else f"exited with status {res.returncode}"
        last = _last_line(res.stderr_tail)
        return failed(reason + (f": {last}" if last else ""))
    try:  # whatever goes wrong with one program's output is that program's failure, never the run's
        values = reader.finish()
        digest = values_sha256(values)
    except ValueError as e:
        return failed(str(e))
    except Exception as e:  # noqa: BLE001 - RecursionError, MemoryError, a reader bug: one line, counted
        return failed(f"output could not be read ({type(e).__name__})")
    return Outcome(job, True, values=values, seconds=time.monotonic() - start, program_sha256=program_sha,
                   values_sha256=digest)


# ------------------------------------------------------------------------------------------------ output
#
# out/<task folder>/.records/<uid>.json holds one verified record each: {uid, ground_truth_values, program_sha256,
# values_sha256}, written by the parent only. out/<task folder>/ground_truth_values.json, the release layout, is
# derived from them at the end of every run, written a record at a time: the parent never holds more than one.

def _atomic_write_text(path: Path, write) -> None:
    """Write ``path`` (its folder made if need be) through ``write(file)``: :meth:`.outdir.Folder.write` in a
    handle of its folder (a temporary file of its own, renamed over ``path`` if that is a file this runner wrote)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = OutDir(path.parent, create=False)
    try:
        Folder(out, "", out.fd, None).write(out.fd, path.name, write, label=escape_controls(path))
    finally:
        out.close()


def _check_out_apart(out: Path, codes: str | Path) -> None:
    """Refuse (one line) an --out that is, lies inside, or holds the programs' folders: the jail shows a program
    its own folder, which would then hold (or be beside) the records and values of the run."""
    root, o = programs_root(codes), Path(os.path.realpath(out))  # not resolve(): a link loop raises RuntimeError
    where = ("the same folder as" if o == root else "inside" if root in o.parents else
             "above" if o in root.parents else None)
    if where:
        raise ValueError(f"--out {escape_controls(out)} is {where} --codes {escape_controls(root)}: the programs "
                         "would see the run's records and values; choose an --out outside --codes")


def _record_name(uid: str) -> str:
    return f"{uid}.json"


def _write_record(folder: Folder, res: Outcome) -> None:
    """Write the record of an accepted output; :class:`TooLarge` when it would pass :data:`MAX_RECORD_BYTES` (so
    no record is ever too large to read back), :class:`RefusedPath` when its name holds a file not this runner's."""
    record = {"uid": res.job.uid, "ground_truth_values": res.values, "program_sha256": res.program_sha256,
              "values_sha256": res.values_sha256}
    # ensure_ascii=False: a label is stored as the UTF-8 it was printed in, not as \uXXXX escapes (an astral
    # character is 4 bytes printed, 12 escaped: a 64 MB output made a 192 MB record, over the read limit)
    folder.write(folder.ensure_records(RECORDS_DIR), _record_name(res.job.uid),
                 lambda f: json.dump(record, f, allow_nan=False, ensure_ascii=False), max_bytes=MAX_RECORD_BYTES,
                 label=f"{folder.label}/{RECORDS_DIR}/{escape_controls(res.job.uid)}.json")


def _read_record(folder: Folder, uid: str) -> tuple[Any, str | None, bool]:
    """A record's content, or the reason it cannot be used; and whether the file is this runner's (a regular
    single-name file holding a record of that uid, which may be removed), or someone else's (left alone)."""
    name = _record_name(uid)
    try:
        data = folder.read(folder.records, name, MAX_RECORD_BYTES)
    except RefusedPath as e:
        return None, f"{e.what} (not a file this runner wrote; left alone)", False
    except TooLarge as e:
        return None, str(e) + " (not a record this runner wrote; left alone)", False
    except OSError as e:
        return None, f"it cannot be read ({e.strerror or e}; left alone)", False
    try:
        text = data.decode("utf-8")
        del data  # the bytes, then the text, freed as soon as the next form exists
        record = json.loads(text)
        del text
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, "it is not a JSON record (not a file this runner wrote; left alone)", False
    if not isinstance(record, dict) or record.get("uid") != uid or "ground_truth_values" not in record:
        return None, "it is not the record of this uid (not a file this runner wrote; left alone)", False
    return record, None, True


def _mismatch(uid: str, record: dict, programs: dict[str, str]) -> str | None:
    """Why a stored record cannot be trusted as the output of the program there now, or None."""
    if not isinstance(record.get("values_sha256"), str) or not isinstance(record.get("program_sha256"), str):
        return "it has no hashes"
    if uid in programs and record["program_sha256"] != programs[uid]:
        return "its program has changed since"
    values = record.get("ground_truth_values")
    try:
        if not isinstance(values, list) or values_sha256(values) != record["values_sha256"]:
            return "its values do not match their hash"
    except (ValueError, TypeError, RecursionError):
        return "its values do not match their hash"
    return None


def _open_folders(out: OutDir, folders, *, create: bool) -> dict[str, Folder | None]:
    """Each task folder's handles (``RefusedPath``, one line, for a link or a non-folder at ``<F>`` or
    ``<F>/.records``), after refusing a values file this runner did not write."""
    opened = {}
    for name in sorted(folders):
        folder = out.folder(name, RECORDS_DIR, create=create)
        if folder is not None:
            folder.check_values_file(VALUES_FILE)
        opened[name] = folder
    return opened


def verified_records(folder: Folder, programs: dict[str, str]) -> tuple[set[str], list[str], dict[str, str]]:
    """The uids of a task folder whose record carries the hash of the program there now (``programs``: uid -> its
    SHA-256; a uid without a program keeps its record if its values match) and of its values, read one record at a
    time; one line per record set aside, with the reason (a record of this runner's that does not verify is
    removed: it runs again); and the uids whose record name holds a file this runner did not write (left alone,
    so that uid cannot be recorded): uid -> reason."""
    good, dropped, foreign = set(), [], {}
    for name in folder.record_names():
        if not name.endswith(".json") or name.startswith("."):
            continue
        uid = name[:-5]
        record, why, ours = _read_record(folder, uid)
        why = why or _mismatch(uid, record, programs)
        if why is None:
            good.add(uid)
            continue
        dropped.append(f"{folder.label.split('/')[-1]}/{escape_controls(uid, 140)}: {why}")
        if ours:
            folder.remove(folder.records, name)
        else:
            foreign[uid] = f"its record {RECORDS_DIR}/{escape_controls(name, 140)} is {why}"
    return good, dropped, foreign


def _assemble(folder: Folder, uids: set[str]) -> tuple[int, dict[str, str]]:
    """Write ``<folder>/ground_truth_values.json`` (the release layout, records sorted by uid) from the records of
    ``uids``, a record at a time; returns how many it holds, and uid -> why for each record that could not be read
    back (counted as failed by the caller: a uid is never silently missing)."""
    folder.ensure_records(RECORDS_DIR)  # marks the values file as this runner's
    written, missing = 0, {}

    def write(f) -> None:
        nonlocal written
        f.write("[")
        for uid in sorted(uids):
            record, why, _ = _read_record(folder, uid)
            if why:  # changed on disk during the run: it runs again next time
                missing[uid] = f"its record could not be read back: {why}"
                continue
            # json.dumps({"uid": uid, "ground_truth_values": values}, ensure_ascii=False), written a value at a
            # time: the parent never holds a record's whole text twice
            f.write(("," if written else "") + '{"uid": ' + json.dumps(uid, ensure_ascii=False)
                    + ', "ground_truth_values": [')
            for i, v in enumerate(record["ground_truth_values"]):
                f.write((", " if i else "") + json.dumps(v, allow_nan=False, ensure_ascii=False))
            f.write("]}")
            del record
            written += 1
        f.write("]")

    folder.write(folder.fd, VALUES_FILE, write)
    return written, missing


@dataclass
class Summary:
    total: int = 0
    skipped: int = 0
    ok: int = 0
    failed: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    files: dict[str, int] = field(default_factory=dict)
    sandbox: str = ""
    durations: dict[str, float] = field(default_factory=dict)  # "folder/uid" -> seconds, for the programs run


def _completed_or_cancelled(futures):
    """``as_completed``; on an interruption (Ctrl-C) the programs not yet started are dropped, not run."""
    try:
        yield from as_completed(futures)
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise


def build_truth(codes: str | Path, out: str | Path, *, trust_release_code: bool = False, workers: int = 2,
                limits: Limits = Limits(), progress: bool = True, python: str | None = None,
                log=None, jail: bool = True, cgroups: bool | None = None) -> Summary:
    """Run every release program not yet done and write ``out/<task folder>/ground_truth_values.json``.

    Refuses (:class:`TrustError`) unless ``trust_release_code``, and (:class:`JailError`, one line naming the
    cause) where no jail can be made unless ``jail=False``, which warns (through ``log``, else ``warnings``) what
    is then not protected. ``cgroups``: see :func:`.jail.prepare`. A link, or anything but a folder, at --out,
    ``<F>`` or ``<F>/.records``, and a values or lock file that is not a regular single-name file, are refused
    (:class:`~.outdir.RefusedPath`, a ``ValueError``: one line naming it) before anything runs or is written
    (:mod:`.outdir`). Failures are collected in the summary, never raised; ``log(line)`` receives one line per
    failure and per stored record set aside."""
    if not trust_release_code:
        raise TrustError("refusing to run the release's ground-truth programs: they are third-party code; pass "
                         "--trust-release-code if you trust this release")
    t0 = time.monotonic()
    out = Path(out)
    jobs = find_programs(codes)
    _check_out_apart(out, codes)
    folders = {j.folder for j in jobs if _UID_RE.match(j.folder)}
    probe = OutDir(out, create=False)  # before anything is made in an --out that is refused
    try:
        _open_folders(probe, folders, create=False)
    finally:
        probe.close()
    sandbox = prepare(python, jail=jail, cgroups=cgroups, hide=(out,))
    handle = OutDir(out, create=True)
    try:
        with handle.lock(LOCK_FILE):
            return _build_locked(jobs, handle, sandbox, jail=jail, workers=workers, limits=limits,
                                 progress=progress, python=python, log=log, t0=t0)
    finally:
        handle.close()


def _build_locked(jobs, out: OutDir, sandbox: Sandbox, *, jail, workers, limits, progress, python, log,
                  t0) -> Summary:
    """:func:`build_truth` once it holds the --out lock."""
    if not jail:
        warning = f"WARNING: --no-jail: {NOT_PROTECTED}"
        if log:
            log(warning)
        else:
            warnings.warn(warning, stacklevel=3)
    bad = [j for j in jobs if not _UID_RE.match(j.uid) or not _UID_RE.match(j.folder)]
    summary = Summary(total=len(jobs), sandbox=sandbox.describe())
    for j in bad:
        summary.failed.append(Outcome(j, False, "file or folder name is not a plain uid"))
    jobs = [j for j in jobs if j not in bad]
    programs: dict[str, dict[str, str]] = {}
    for j in jobs:
        try:
            programs.setdefault(j.folder, {})[j.uid] = program_sha256(j.path)
        except ValueError:  # reported when it runs
            programs.setdefault(j.folder, {})[j.uid] = ""
    folders = _open_folders(out, programs, create=True)  # checked again: the handles are taken now
    done: dict[str, set[str]] = {}  # folder -> uids whose records verified now, and those written in this run
    foreign: dict[tuple[str, str], str] = {}
    for name, folder in folders.items():
        folder.remove_stale_temporaries()
        done[name], dropped, alien = verified_records(folder, programs[name])
        foreign.update({(name, uid): why for uid, why in alien.items()})
        for line in dropped:
            if log:
                log(f"not reusing the stored record of {line}" + ("" if "left alone" in line else "; it runs again"))
    todo = []
    for j in jobs:
        if j.uid in done[j.folder]:
            continue
        if (j.folder, j.uid) in foreign:  # its record could not be written without deleting that file
            summary.failed.append(Outcome(j, False, foreign[(j.folder, j.uid)]))
            if log:
                log(f"FAILED {summary.failed[-1].line()}")
        else:
            todo.append(j)
    summary.skipped = len(jobs) - len(todo) - len([j for j in jobs if (j.folder, j.uid) in foreign])
    skipped_uids = {(j.folder, j.uid) for j in jobs if j.uid in done[j.folder]}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc="ground truth", unit="prog", file=sys.stderr, dynamic_ncols=True)
    by_uid = {(j.folder, j.uid): j for j in jobs}
    try:
        with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
            futures = [pool.submit(run_program, j, limits, python, sandbox) for j in todo]
            for fut in _completed_or_cancelled(futures):
                res = fut.result()
                summary.durations[f"{res.job.folder}/{res.job.uid}"] = res.seconds
                if res.ok:
                    try:
                        _write_record(folders[res.job.folder], res)
                    except TooLarge as e:
                        res.ok, res.reason = False, f"its record would be too large to read back ({e})"
                    except RefusedPath as e:
                        res.ok, res.reason = False, f"could not write its record: {e}"
                    except (OSError, ValueError, TypeError, RecursionError) as e:
                        res.ok, res.reason = False, f"could not write its record: {getattr(e, 'strerror', None) or e}"
                if res.ok:
                    done[res.job.folder].add(res.job.uid)
                    summary.ok += 1
                else:
                    summary.failed.append(res)
                    if log:
                        log(f"FAILED {res.line()}")
                res.values = None
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        for name in sorted(folders):
            summary.files[name], missing = _assemble(folders[name], done[name])
            for uid, why in sorted(missing.items()):  # never silently missing from the values file
                if (name, uid) in skipped_uids:
                    summary.skipped -= 1
                elif any(f.job.folder == name and f.job.uid == uid for f in summary.failed):
                    continue
                else:
                    summary.ok -= 1
                job = by_uid.get((name, uid)) or Job(name, uid, Path(uid))
                summary.failed.append(Outcome(job, False, why))
                if log:
                    log(f"FAILED {summary.failed[-1].line()}")
    summary.seconds = time.monotonic() - t0
    return summary


# ------------------------------------------------------------------------------------------------ CLI

# (option, Limits field, type, help): the per-program limits on the command line
_LIMIT_OPTIONS = (
    ("--timeout", "wall_s", float, "wall-clock seconds per program"),
    ("--cpu-limit", "cpu_s", int, "CPU seconds per program, all its processes together"),
    ("--memory-mb", "memory_mb", int, "memory (MB) per program, all its processes together"),
    ("--max-procs", "max_procs", int, "processes and threads per program"),
    ("--scratch-mb", "scratch_mb", int, "the program's private /tmp and /dev/shm together (MB)"),
    ("--max-output-mb", "max_output_mb", float, "what a program may print (MB)"),
)


def add_parser(sub) -> None:
    """Register ``official truth`` under the ``ub`` sub-command parser ``sub``."""
    off = sub.add_parser("official", help="tools for the official UnpredictaBench release")
    osub = off.add_subparsers(dest="official_command", required=True)
    tr = osub.add_parser(
        "truth", help="run the release's ground-truth programs in a jail -> ground_truth_values/",
        description="Run the release's ground-truth programs, each in a bubblewrap jail (its own user, mount, pid, "
                    "network and IPC namespaces; read-only filesystem with only the interpreter and the program's "
                    "folder; a private capped scratch; no network; the output folder invisible) under "
                    "whole-program limits, and write ground_truth_values/<task folder>/ground_truth_values.json. "
                    "Refused where no jail can be made, unless --no-jail.")
    tr.add_argument("--codes", required=True, help="release root, its ground_truth_codes/ folder, or one task folder")
    tr.add_argument("--out", required=True, help="output folder (the release's ground_truth_values/ layout)")
    tr.add_argument("--trust-release-code", action="store_true",
                    help="required: you trust the release's programs enough to run them (in a jail)")
    tr.add_argument("--no-jail", action="store_true",
                    help="run without a jail where none can be made (needs bubblewrap and user namespaces): the "
                         "programs can then read your files, write wherever you can, use the network and outlive "
                         "the run; only the limits and the scrubbed environment remain")
    tr.add_argument("--workers", type=int, default=2, help="programs run at once (default 2)")
    for flag, name, kind, what in _LIMIT_OPTIONS:
        default = getattr(Limits, name)
        tr.add_argument(flag, dest=name, type=kind, default=default, metavar="N", help=f"{what} (default {default:g})")
    tr.add_argument("--n-values", type=int, default=10_000,
                    help="values each program must print (0: any number up to 1,000,000; default 10000 as in the "
                         "release)")
    tr.add_argument("--no-progress", action="store_true", help="no progress bar")
    tr.set_defaults(func=cmd_official)


def cmd_official(args) -> int:
    if args.official_command != "truth":
        raise SystemExit(f"unknown official command {args.official_command!r}")
    if not args.trust_release_code:
        print("ub official truth: refusing to run the release's programs (third-party code); "
              "add --trust-release-code if you trust this release", file=sys.stderr)
        return 2
    for flag, name in [("--workers", "workers")] + [(o[0], o[1]) for o in _LIMIT_OPTIONS]:
        if getattr(args, name) <= 0:
            print(f"ub official truth: {flag} must be positive", file=sys.stderr)
            return 2
    if args.n_values < 0:
        print("ub official truth: --n-values must be 0 or positive", file=sys.stderr)
        return 2
    limits = Limits(n_values=args.n_values or None, **{o[1]: getattr(args, o[1]) for o in _LIMIT_OPTIONS})
    try:
        s = build_truth(args.codes, args.out, trust_release_code=True, workers=args.workers, limits=limits,
                        progress=not args.no_progress, log=lambda line: print(line, file=sys.stderr),
                        jail=not args.no_jail)
    except JailError as e:
        # --no-jail is offered only where the cause cannot be mended here: never instead of a chmod
        offer = "" if e.fixable else "; pass --no-jail to run the programs without one (unprotected)"
        print(f"ub official truth: no jail can be made here: {e}{offer}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"ub official truth: {escape_controls(e)}", file=sys.stderr)
        return 2
    print(f"{s.total} programs: {s.ok} run, {s.skipped} already done, {len(s.failed)} failed "
          f"({s.seconds:.1f} s; {s.sandbox})")
    for folder, n in s.files.items():
        print(f"  {escape_controls(Path(args.out) / folder / VALUES_FILE)}: {n} uids")
    for f in s.failed:
        print(f"  failed {f.line()}")
    return 1 if s.failed else 0
