"""The ``metric_list`` of the lm-eval task YAMLs, generated from the metric spec (:mod:`ub_core.metric_spec`).

lm-eval reads a task's metrics from its YAML, statically, so the lists stay written out in the YAMLs, where a reader
finds them; this module writes them from the spec and checks them against it:

- a template's ``metric_list``: one row per metric of the eval family's spec that lm-eval reports (adapter
  ``lmeval``; a per-N entry at its default Ns), in spec order: its key, its aggregation (from its ``kind``:
  :attr:`ub_core.metric_spec.MetricSpec.aggregation`, written as lm-eval's ``mean`` or our ``utils.nanmean`` /
  ``utils.total``, or the spec's ``lmeval_aggregation`` hook) and its direction
  (:func:`ub_core.metric_spec.direction`; ``null`` for a two-sided metric or a diagnostic);
- a group's ``aggregate_metric_list``: its rates (kind ``rate``, aggregation ``mean``), whose size-weighted mean
  over the group's tasks is the mean over all its documents (lm-eval weights by the number of documents; a
  ``nanmean`` leaves some out, a ``total`` is a sum). A rate averaged by ``nanmean`` in lm-eval only where a
  document is left out as unresolved (the sampling-free ``p_pass@N``) is there too: its group mean weights each
  task by all its documents, the unresolved ones included (``ub report`` has the exact mean over the rest).

``python -m ub_lmeval.metric_lists`` reports every YAML whose list differs from the spec (exit status 1);
``--write`` rewrites those lists through a YAML round-trip (``ruamel.yaml``: comments, key order and the rest of
the file kept). ``tests/generic/test_spec_values.py`` runs the check and, with a toy metric registered, writes a
copy of the KS@N YAMLs and runs lm-eval on it.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import Sequence

from ub_core.metric_keys import split_key
from ub_core.metric_spec import direction, run_specs

__all__ = ["metric_list", "group_metric_list", "sync", "SPEC_YAMLS", "main"]

#: The YAMLs whose lists are the spec's: (path under the task folder, the list's key, metric-spec eval family, the
#: group's filter where the list is a group's ``aggregate_metric_list``).
SPEC_YAMLS: tuple[tuple[str, str, str, str | None], ...] = (
    ("ksn/_ub_ksn_template_yaml", "metric_list", "ksn", None),
    ("ksn/ub_ksn.yaml", "aggregate_metric_list", "ksn", "take_100"),
    ("ksn_logprob/_ub_ksn_logprob_template_yaml", "metric_list", "ksn_logprob", None),
    ("ksn_logprob/ub_ksn_logprob.yaml", "aggregate_metric_list", "ksn_logprob", None),
    ("odds/_ub_odds_template_yaml", "metric_list", "odds_question", None),
    ("odds/ub_odds_sampling.yaml", "metric_list", "odds_sampling", None),
    ("stability/_ub_tar_template_yaml", "metric_list", "stability", None),
    ("dice/_ub_dice_template_yaml", "metric_list", "dice", None),
)

_HOOKS = {"nanmean": "nanmean", "total": "total"}  # spec aggregation -> our hook in the task folder's utils.py
_FUNCTION = "!function"


def _aggregation(spec) -> str:
    if spec.lmeval_aggregation:
        return f"{_FUNCTION} utils.{spec.lmeval_aggregation}"
    return spec.aggregation if spec.aggregation == "mean" else f"{_FUNCTION} utils.{_HOOKS[spec.aggregation]}"


def metric_list(eval_family: str) -> list[dict]:
    """A template's ``metric_list`` rows for ``eval_family``: ``{"metric", "aggregation", "higher_is_better"}``,
    the aggregation as the YAML writes it (``mean`` or ``!function utils.<hook>``)."""
    return [{"metric": key, "aggregation": _aggregation(m), "higher_is_better": direction(m)}
            for key, m in run_specs(eval_family, adapter="lmeval")]


def group_metric_list(eval_family: str, filter_list: str | None = None) -> list[dict]:
    """A group's ``aggregate_metric_list`` rows for ``eval_family``: its rates (see the module docstring)."""
    return [{"metric": key, "aggregation": "mean", "weight_by_size": True,
             **({"filter_list": filter_list} if filter_list else {})}
            for key, m in run_specs(eval_family, adapter="lmeval")
            if m.kind == "rate" and m.aggregation == "mean" and m.lmeval_aggregation in (None, "nanmean")]


def _rows(key: str, eval_family: str, filter_list: str | None) -> list[dict]:
    if key == "aggregate_metric_list":
        return group_metric_list(eval_family, filter_list)
    return metric_list(eval_family)


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096  # one row a line, as written
    yaml.indent(mapping=2, sequence=4, offset=2)  # "  - " items, as the task YAMLs are written
    yaml.preserve_quotes = True
    return yaml


def _plain(value):
    """A loaded YAML scalar as :func:`metric_list` writes it (``!function utils.x`` as that string)."""
    tag = getattr(getattr(value, "tag", None), "value", None) or getattr(value, "tag", None)
    if isinstance(tag, str) and tag == _FUNCTION:
        return f"{_FUNCTION} {value.value}"
    return value


def _node(rows: list[dict]):
    """The rows as YAML nodes: a block list of one-line flow mappings, ``!function`` hooks tagged."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    seq = CommentedSeq()
    for row in rows:
        item = CommentedMap()
        for k, v in row.items():
            if isinstance(v, str) and v.startswith(f"{_FUNCTION} "):
                v = TaggedScalar(value=v[len(_FUNCTION) + 1:], tag=_FUNCTION)
            elif isinstance(v, str) and split_key(v)[1] is not None:  # "ks@100", quoted as the YAMLs always wrote it
                v = DoubleQuotedScalarString(v)
            item[k] = v
        item.fa.set_flow_style()
        seq.append(item)
    return seq


def sync(path: str | Path, key: str, eval_family: str, filter_list: str | None = None,
         write: bool = False) -> bool:
    """Whether the list ``key`` of the YAML at ``path`` is the spec's; with ``write``, make it so (the file is read
    and written through ``ruamel.yaml``'s round-trip, so the rest of it stays as it was)."""
    path = Path(path)
    yaml = _yaml()
    doc = yaml.load(path.read_text(encoding="utf-8"))
    if not hasattr(doc, "get") or key not in doc:
        raise ValueError(f"{path}: no top-level '{key}:' list")
    wanted = _rows(key, eval_family, filter_list)
    have = [{k: _plain(v) for k, v in row.items()} if hasattr(row, "items") else row for row in (doc[key] or [])]
    if have == wanted:
        return True
    if write:
        doc[key] = _node(wanted)
        out = io.StringIO()
        yaml.dump(doc, out)
        path.write_text(out.getvalue(), encoding="utf-8")
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
