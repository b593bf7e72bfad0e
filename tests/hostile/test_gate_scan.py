"""Every file the package reads from a path goes through the gate (:mod:`ub_core.untrusted`):
this scan fails when a module of ``ub_core``, ``ub_inspect`` or ``ub_lmeval`` opens or parses a path for reading
any other way (``open(``, ``Path.open``/``read_text``/``read_bytes``, ``json.load``, ``np.load``,
``zipfile.ZipFile``, ``tarfile.open``, ``csv`` on a file, ``pickle.load``, ``pandas.read_*``, ``os.open``...), save
the short allow-list below, each entry with the reason it is not outside input. A new reader must use the gate
or be named here with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ub_core", "ub_inspect", "ub_lmeval")

#: (module, a fragment of the line's source) -> why it is no outside input or is already behind the gate
ALLOWED = {
    ("ub_core/untrusted.py", ""): "the gate itself",
    ("ub_core/release_tools/jail.py", ""): "kernel files (/proc/self, the cgroup file systems), not user input",
    ("ub_core/release_tools/jail_watchdog.py", ""): "kernel files under /proc of the jailed processes",
    ("ub_core/release_tools/outdir.py", ""): "ub's own output folder, opened by folder descriptor with O_NOFOLLOW "
                                             "and a type check of its own (writes and rereads of what ub wrote)",
    ("ub_core/cache.py", "/proc/self/status"): "the kernel's account of this process's memory",
    ("ub_core/cache.py", "np.load(fh"): "fh comes from the gate's open_regular",
    ("ub_core/report/eval_zip.py", "zipfile.ZipFile(fh)"): "fh comes from the gate's open_regular",
    ("ub_core/reproduce/stability.py", "tarfile.open(fileobj=fh"): "fh comes from the gate's open_regular",
    ("ub_core/problems/ksn/release_processes.py", "resources.files"): "package data shipped with ub_core",
    ("ub_lmeval/metric_lists.py", "path.read_text"): "the package's own task YAMLs (a developer's sync tool)",
}

_READ_ATTRS = {"read_text", "read_bytes"}
_MODULE_CALLS = {("json", "load"), ("np", "load"), ("numpy", "load"), ("np", "loadtxt"), ("np", "fromfile"),
                 ("np", "genfromtxt"), ("zipfile", "ZipFile"), ("tarfile", "open"), ("pickle", "load"),
                 ("pd", "read_csv"), ("pd", "read_json"), ("pd", "read_parquet"), ("os", "open"), ("io", "open"),
                 ("gzip", "open"), ("bz2", "open"), ("lzma", "open"), ("shelve", "open"), ("csv", "reader"),
                 ("csv", "DictReader"), ("yaml", "safe_load"), ("yaml", "load")}


def _mode(call: ast.Call) -> str | None:
    args = call.args[1:2] if isinstance(call.func, ast.Name) else call.args[0:1]
    for kw in call.keywords:
        if kw.arg == "mode":
            args = [kw.value]
    if not args:
        return "r"
    return args[0].value if isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) else None


def _writes(call: ast.Call) -> bool:
    mode = _mode(call)
    return mode is not None and bool(set(mode) & set("wax"))


def _in_memory(call: ast.Call) -> bool:
    """``csv.reader(io.StringIO(text))`` and the like: text already read, through the gate."""
    return bool(call.args) and isinstance(call.args[0], ast.Call) and isinstance(call.args[0].func, ast.Attribute) \
        and call.args[0].func.attr in ("StringIO", "BytesIO")


def reads(source: str) -> list[tuple[int, str]]:
    """(line, call) of every call in ``source`` that opens or parses a path for reading."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f, what = node.func, None
        if isinstance(f, ast.Name) and f.id == "open" and not _writes(node):
            what = "open("
        elif isinstance(f, ast.Attribute):
            if f.attr in _READ_ATTRS:
                what = f".{f.attr}("
            elif isinstance(f.value, ast.Name) and (f.value.id, f.attr) in _MODULE_CALLS:
                if not (f.value.id == "os" and _writes_os(node)) and not _in_memory(node):
                    what = f"{f.value.id}.{f.attr}("
            elif f.attr == "open" and not _writes(node):
                what = ".open("
        if what:
            found.append((node.lineno, what))
    return found


def _writes_os(call: ast.Call) -> bool:
    flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
    return "O_WRONLY" in flags or "O_RDWR" in flags


def _allowed(rel: str, line: str) -> bool:
    return any(rel == mod and frag in line for (mod, frag) in ALLOWED)


def test_no_module_reads_a_path_outside_the_gate():
    outside = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            source = path.read_text(encoding="utf-8")
            lines = source.splitlines()
            for lineno, what in reads(source):
                if not _allowed(rel, lines[lineno - 1]):
                    outside.append(f"{rel}:{lineno}: {what} {lines[lineno - 1].strip()[:100]}")
    assert not outside, "reads outside the gate (use ub_core.untrusted, or allow-list with a " \
                        "reason):\n" + "\n".join(outside)


def test_every_allow_list_entry_is_still_needed():
    """An entry that matches nothing is stale: the list stays short and true."""
    for (mod, frag), reason in ALLOWED.items():
        source = (ROOT / mod).read_text(encoding="utf-8")
        lines = source.splitlines()
        assert reason and any(frag in lines[n - 1] for n, _ in reads(source)), (mod, frag)


def test_the_scan_sees_each_kind_of_read():
    """The scan itself: each way of reading a path is caught, writes and in-memory parsing are not."""
    caught = ["open(p)", "open(p, 'rb')", "p.open()", "p.read_text()", "p.read_bytes()", "json.load(fh)",
              "np.load(p)", "zipfile.ZipFile(p)", "tarfile.open(p)", "csv.reader(fh)", "pickle.load(fh)",
              "pd.read_csv(p)", "os.open(p, os.O_RDONLY)", "yaml.safe_load(fh)"]
    for code in caught:
        assert reads(code), code
    for code in ["open(p, 'w')", "p.open('a')", "csv.reader(io.StringIO(text))", "json.loads(text)",
                 "os.open(p, os.O_WRONLY | os.O_CREAT)", "p.write_text(t)"]:
        assert not reads(code), code
