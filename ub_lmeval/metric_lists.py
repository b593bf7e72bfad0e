"""The ``metric_list`` of the lm-eval task YAMLs, generated from the metric spec (:mod:`ub_core.metric_spec`).

lm-eval reads a task's metrics from its YAML, statically, so the lists stay written out in the YAMLs, where a reader
finds them; this module writes them from the spec and checks them against it:

- a template's ``metric_list``: one row per metric of the eval family's spec that lm-eval reports (adapter
  ``lmeval``), in spec order: its key, its aggregation (lm-eval's ``mean``, our ``utils.nanmean`` /
  ``utils.total``, or the spec's ``lmeval_aggregation`` hook) and its direction (``null`` for a two-sided metric);
- a group's ``aggregate_metric_list``: the rates among them (aggregation ``mean``, values in [0, 1]), the only
  metrics whose size-weighted mean over the group's tasks is the mean over all its documents (lm-eval weights by
  the number of documents; a ``nanmean`` leaves some out, a ``total`` is a sum).

``python -m ub_lmeval.metric_lists`` reports every YAML whose list differs from the spec (exit status 1);
``--write`` rewrites those lists. ``tests/generic/test_spec_values.py`` runs the check and, with a toy metric added to the
spec, writes a copy of the KS@N YAMLs and runs lm-eval on it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Sequence

from ub_core.metric_spec import UNIT, direction, metric_specs

__all__ = ["metric_list", "group_metric_list", "render", "sync", "SPEC_YAMLS", "main"]

#: The YAMLs whose lists are the spec's: (path under the task folder, the list's key, metric-spec eval family, the
#: group's filter where the list is a group's ``aggregate_metric_list``).
SPEC_YAMLS: tuple[tuple[str, str, str, str | None], ...] = (
    ("ksn/_ub_ksn_template_yaml", "metric_list", "ksn", None),
    ("ksn/ub_ksn.yaml", "aggregate_metric_list", "ksn", "take_100"),
    ("ksn_logprob/_ub_ksn_logprob_template_yaml", "metric_list", "ksn_logprob", None),
    ("odds/_ub_odds_template_yaml", "metric_list", "odds_question", None),
    ("odds/ub_odds_sampling.yaml", "metric_list", "odds_sampling", None),
    ("stability/_ub_tar_template_yaml", "metric_list", "stability", None),
)

_HOOKS = {"nanmean": "nanmean", "total": "total"}  # spec aggregation -> our hook in the task folder's utils.py


def _aggregation(spec) -> str:
    if spec.lmeval_aggregation:
        return f"!function utils.{spec.lmeval_aggregation}"
    return spec.aggregation if spec.aggregation == "mean" else f"!function utils.{_HOOKS[spec.aggregation]}"


def metric_list(eval_family: str) -> list[dict]:
    """A template's ``metric_list`` rows for ``eval_family``: ``{"metric", "aggregation", "higher_is_better"}``,
    the aggregation as the YAML writes it (``mean`` or ``!function utils.<hook>``)."""
    return [{"metric": m.key, "aggregation": _aggregation(m), "higher_is_better": direction(m)}
            for m in metric_specs(eval_family) if "lmeval" in m.adapters]


def group_metric_list(eval_family: str, filter_list: str | None = None) -> list[dict]:
    """A group's ``aggregate_metric_list`` rows for ``eval_family``: its rates (see the module docstring)."""
    return [{"metric": m.key, "aggregation": "mean", "weight_by_size": True,
             **({"filter_list": filter_list} if filter_list else {})}
            for m in metric_specs(eval_family)
            if "lmeval" in m.adapters and m.aggregation == "mean" and m.bounds == UNIT and not m.lmeval_aggregation]


def _scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|!function [\w.]+", text) else f'"{text}"'


def render(rows: Sequence[dict]) -> list[str]:
    """The YAML lines of a list of rows, one flow mapping a line (``  - {metric: "ks@1", ...}``)."""
    return ["  - {" + ", ".join(f"{k}: {_scalar(v)}" for k, v in row.items()) + "}" for row in rows]


def _rows(key: str, eval_family: str, filter_list: str | None) -> list[dict]:
    if key == "aggregate_metric_list":
        return group_metric_list(eval_family, filter_list)
    return metric_list(eval_family)


def sync(path: str | Path, key: str, eval_family: str, filter_list: str | None = None,
         write: bool = False) -> bool:
    """Whether the list ``key`` of the YAML at ``path`` is the spec's (:func:`render`); with ``write``, make it so.
    The list is the block of ``  - `` lines after the top-level ``key:`` line."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        start = lines.index(f"{key}:") + 1
    except ValueError:
        raise ValueError(f"{path}: no top-level '{key}:' list") from None
    end = start
    while end < len(lines) and lines[end].startswith("  - "):
        end += 1
    wanted = render(_rows(key, eval_family, filter_list))
    if lines[start:end] == wanted:
        return True
    if write:
        path.write_text("\n".join(lines[:start] + wanted + lines[end:]) + "\n", encoding="utf-8")
    return False


def main(argv: Sequence[str] | None = None) -> int:
    from . import tasks_dir

    ap = argparse.ArgumentParser(prog="python -m ub_lmeval.metric_lists", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the lists that differ from the spec")
    ap.add_argument("--tasks-dir", default=str(tasks_dir()), help="the task folder (default: this package's)")
    args = ap.parse_args(argv)
    stale = [rel for rel, key, eval_family, filt in SPEC_YAMLS
             if not sync(Path(args.tasks_dir) / rel, key, eval_family, filt, write=args.write)]
    for rel in stale:
        print(f"{'rewrote' if args.write else 'differs from the spec'}: {rel}")
    return 1 if stale and not args.write else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
