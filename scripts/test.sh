#!/usr/bin/env bash
# The README's test command: install what the tests need on a fresh machine, then run every test.
# Arguments go to pytest: `bash scripts/test.sh -m "not slow"` is the fast inner loop, and
# `bash scripts/test.sh tests/report/test_report.py -x` runs one file.
set -euo pipefail
cd "$(dirname "$0")/.."

# CPU torch pinned first, so nothing pulls a CUDA build; then the package with its test extras.
python -m pip install --quiet --disable-pip-version-check torch==2.13.0 -e '.[test]'

# System packages the tests need: Debian's chromium (headless, for the report's browser test,
# tests/report/test_report.py::test_page_in_headless_chromium), bubblewrap and libseccomp2 (the jail of
# `ub official truth` and its seccomp filter, tests/hostile/test_official_truth_*.py).
have_chromium() { command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1
have_bwrap() { command -v bwrap; } >/dev/null 2>&1
have_libseccomp() { python -c 'import ctypes.util, sys; sys.exit(ctypes.util.find_library("seccomp") is None)'; } >/dev/null 2>&1
missing=()
have_chromium || missing+=(chromium)
have_bwrap || missing+=(bubblewrap)
have_libseccomp || missing+=(libseccomp2)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then sudo=(); elif command -v sudo >/dev/null 2>&1; then sudo=(sudo); else sudo=(none); fi
    if [ "${sudo[0]:-}" = none ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "scripts/test.sh: ${missing[*]} missing and cannot be installed here (needs root and apt-get):" \
             "install the package(s) '${missing[*]}' with your package manager, then run this again" >&2
        exit 1
    fi
    echo "scripts/test.sh: installing Debian's ${missing[*]} (the report's browser test, the truth runner's jail)" >&2
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    have_chromium || { echo "scripts/test.sh: apt-get installed no chromium binary" >&2; exit 1; }
    have_bwrap || { echo "scripts/test.sh: apt-get installed no bwrap binary" >&2; exit 1; }
    have_libseccomp || { echo "scripts/test.sh: apt-get installed no libseccomp library" >&2; exit 1; }
fi

# Every core (pytest-xdist, in the test extras), unless the caller chose the workers (-n) or turned xdist off. Each
# test module runs on one worker (--dist loadscope): a module's expensive module-scoped fixtures (framework runs,
# whole-bank scorings: tens of seconds each) are then built once, not once per worker that the module's tests reach.
# The costliest modules go out first (tests/support/xdist_order.py): xdist's own order (most tests first) left the few
# long ones (a fresh venv, framework subprocesses) to the end, run by one worker while the other sat idle.
workers=(-n auto --dist loadscope --no-loadscope-reorder -p tests.support.xdist_order)
for arg in "$@"; do
    case "$arg" in -n|-n*|--numprocesses*|no:xdist) workers=() ;; esac
done
exec python -m pytest -q "${workers[@]}" "$@"
