"""Command line: ``python -m tools.release_specs --mirror DIR [--no-bank] [--specs FILE] [--summary FILE]``.

Writes the specs table (test data: ``tests/data/release_specs.json``) and ``SUMMARY.md`` (next to this file); both
defaults are derived from this file's location, never from the current folder."""
from __future__ import annotations

import argparse
import collections
import json
import os
from pathlib import Path

from . import release
from .registry import MAIN
from .specs import build_specs
from .summary import bank_counter, write_summary

SPECS_OUT = Path(MAIN) / "tests" / "data" / "release_specs.json"
SUMMARY_OUT = Path(__file__).resolve().parent / "SUMMARY.md"


def public_specs(specs: list[dict]) -> list[dict]:
    """Facts only in the written table: the release's own code text (call sources, output expressions) stays out."""
    public = []
    for spec in specs:
        spec = {k: v for k, v in spec.items() if k != "output_expression"}
        spec["sampler_calls"] = [{k: v for k, v in c.items() if k != "call"} for c in spec.get("sampler_calls", [])]
        public.append(spec)
    return public


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.release_specs", description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=os.environ.get("UB_RELEASE_MIRROR", ""),
                        help="a git checkout or bare mirror of the release (or $UB_RELEASE_MIRROR); required")
    parser.add_argument("--no-bank", action="store_true", help="skip the comparison with our bank")
    parser.add_argument("--specs", type=Path, default=SPECS_OUT, help=f"specs table to write (default {SPECS_OUT})")
    parser.add_argument("--summary", type=Path, default=SUMMARY_OUT,
                        help="summary to write (default: next to this file)")
    args = parser.parse_args(argv)
    if not args.mirror or not os.path.isdir(args.mirror):
        parser.error("name the release checkout or mirror with --mirror DIR (or UB_RELEASE_MIRROR)")
    release.MIRROR = args.mirror
    specs, ours = build_specs()
    with open(args.specs, "w", encoding="utf-8") as fh:
        json.dump(public_specs(specs), fh, indent=1, ensure_ascii=False, default=str)
    bank = None if args.no_bank else bank_counter()
    with open(args.summary, "w", encoding="utf-8") as fh:
        fh.write(write_summary(specs, ours, bank))
    c = collections.Counter(s["status"] for s in specs)
    print(f"{len(specs)} programs: {dict(c)}")
