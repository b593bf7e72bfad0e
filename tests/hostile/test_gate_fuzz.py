"""The standing fuzz test of the gate's readers: each reader crossed with the hostile files of the class (a FIFO,
a link to /dev/zero, a socket, a 1 GB sparse file, JSON nested 10^6 deep, 10**400, NaN and Infinity, zip and npz
bombs, duplicate keys, names with ESC, newline or a leading ``=``) ends in one named, one-line error of the gate,
in a child process whose peak memory stays under 512 MB, as the caller and (from root) as ``nobody``. The child prints
each case's seconds and the peak, which the closing note of the gate's issue quotes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.truth_runner import NOBODY, ROOT, as_nobody

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="FIFOs, sockets, /dev/zero, /proc/self/status")

_CHILD = r'''
import io, json, os, socket, sys, time, zipfile
from pathlib import Path
import numpy as np
from ub_core import untrusted as G

tmp = Path(sys.argv[1])
MB = 2**20

def make(name, kind):
    p = tmp / name
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev-zero":
        p.symlink_to("/dev/zero")
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX); s.bind(str(p)); keep.append(s)
    elif kind == "sparse":
        with p.open("wb") as fh: fh.truncate(2**30)
    elif kind == "deep":
        p.write_bytes(b"[" * 10**6 + b"]" * 10**6)
    elif kind == "huge-int":
        p.write_text('{"p": ' + "1" + "0" * 400 + "}")
    elif kind == "nan":
        p.write_text('{"p": NaN, "q": Infinity}')
    elif kind == "dup-keys":
        p.write_text('{"p": 1, "p": 2}')
    elif kind in ("zip-bomb", "npz-bomb"):
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf, \
                zf.open("a.npy", "w", force_zip64=True) as fh:
            if kind == "npz-bomb":
                h = np.lib.format.header_data_from_array_1_0(np.zeros(1)); h["shape"] = (200 * MB // 8,)
                np.lib.format.write_array_header_1_0(fh, h)
            for _ in range(50): fh.write(bytes(4 * MB))
    else:  # a hostile name with ordinary content
        p.write_text('{"p": 1}')
    return p

keep = []
def json_number(p):  # read, decode with duplicate keys refused, and take "p" as a number: the dice reader's path
    return G.finite_number(G.loads(G.read_text(p, 32 * MB), unique_keys=True)["p"], "p")
readers = {
    "read_bytes": lambda p: G.read_bytes(p, 32 * MB),
    "read_text": lambda p: G.read_text(p, 32 * MB),
    "iter_lines": lambda p: sum(1 for _ in G.iter_lines(p, 64 * MB, 1 * MB)),
    "read_npz": lambda p: G.read_npz(p, max_file_bytes=32 * MB, max_member_bytes=16 * MB, max_total_bytes=32 * MB),
    "json_number": json_number,
    "check_regular": lambda p: G.check_regular(p, 32 * MB),
}
kinds = ["fifo", "dev-zero", "socket", "sparse", "deep", "huge-int", "nan", "dup-keys", "zip-bomb", "npz-bomb",
         "esc\x1b[2J\u202ename", "new\nline", "=cmd"]
errors = (G.UntrustedFileError, G.UntrustedJSONError, G.UntrustedNumberError)
out = []
for rname, reader in readers.items():
    for kind in kinds:
        p = make(f"{rname}-{len(out)}-{kind}.json", kind)
        t0 = time.monotonic()
        try:
            reader(p)
            result = "read"
        except errors as e:
            result = "gap: " + str(e)
        except Exception as e:
            result = f"CRASH {type(e).__name__}: {e}"[:300]
        out.append({"reader": rname, "kind": kind, "s": round(time.monotonic() - t0, 3), "result": result})
hwm = int([ln for ln in open("/proc/self/status") if ln.startswith("VmHWM")][0].split()[1])
print(json.dumps({"cases": out, "peak_kb": hwm, "uid": os.geteuid(), "registered": list(G.READERS),
                  "fuzzed": list(readers)}))
'''

# what each reader must make of each hostile file: a named gap (a word of its line), or "read" where the file
# is no harm to that reader (names are only names; check_regular looks at the type and size alone)
_NAMED = {"fifo": "a FIFO", "dev-zero": "a character device", "socket": "a socket", "sparse": "byte limit"}


def _as_nobody_possible() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("bwrap") is not None \
        and shutil.which("setpriv") is not None


@pytest.mark.parametrize("who", ["caller", "nobody"])
def test_every_reader_ends_each_hostile_file_with_one_named_gap(tmp_path, who):
    cmd = [sys.executable, "-c", _CHILD]
    if who == "nobody":  # the same readers as an unprivileged user (root skips some permission checks)
        if not _as_nobody_possible():
            pytest.skip("needs root, bwrap and setpriv to drop to nobody")
        tmp_path = Path(tempfile.mkdtemp(prefix="ub-gate-fuzz-", dir="/tmp"))  # pytest's own is root's alone
        tmp_path.chmod(0o777)
        cmd = as_nobody(cmd)
    try:
        proc = subprocess.run([*cmd, str(tmp_path)], capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        if who == "nobody":
            shutil.rmtree(tmp_path, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(got, indent=0))  # the measured seconds per case and the peak (pytest -s shows them)
    for case in got["cases"]:
        r, kind, result = case["reader"], case["kind"], case["result"]
        assert not result.startswith("CRASH"), case
        assert "\n" not in result.replace(str(tmp_path), ""), case
        if kind in _NAMED:
            assert result.startswith("gap") and _NAMED[kind] in result, case
        elif r == "json_number" and kind in ("deep", "huge-int", "nan", "dup-keys", "zip-bomb", "npz-bomb"):
            assert result.startswith("gap"), case
        elif r == "read_npz" and kind != "npz-bomb":
            assert result.startswith("gap"), case  # not a zip, or a member over its cap
        elif r == "read_npz":
            assert "unpacks to more than" in result, case
    assert got["peak_kb"] * 1024 < 512 * 2**20, got["peak_kb"]
    assert (got["uid"] == NOBODY) == (who == "nobody"), got["uid"]
    assert set(got["registered"]) <= set(got["fuzzed"]), "a reader of the gate that the fuzz test does not cross"
