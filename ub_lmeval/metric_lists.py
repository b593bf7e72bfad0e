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
the file kept).

A plug-in's bank (:mod:`ub_core.plugins`) gets its task YAML in its own folder, never in ours:
:func:`write_task_yaml` (``python -m ub_lmeval.metric_lists --bank ftm --task ub_mix --out DIR``) writes a
``BankTask`` YAML whose ``metric_list`` is :func:`bank_metric_list`: the template's list, then the bank's own
metrics and its run metrics. The whole union is written because lm-eval's ``metric_list`` in a task's YAML
replaces the one it includes; the hooks are named by their full module paths, since the YAML lives outside our task
folder. ``tests/generic/test_spec_values.py`` runs the check and, with a toy metric registered, writes a
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
from ub_core.run_metrics import bank_families, run_metrics_for

__all__ = ["metric_list", "group_metric_list", "sync", "SPEC_YAMLS", "main", "bank_metric_list", "write_task_yaml",
           "RUN_METRIC_HOOKS", "KSN_HOOKS"]

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


#: where the hooks of a plug-in's YAML are (by full module path: it lives outside our task folder)
KSN_HOOKS = "ub_lmeval.ksn_hooks"
RUN_METRIC_HOOKS = "ub_lmeval.run_metric_hooks"


def bank_metric_list(bank: str) -> list[dict]:
    """The ``metric_list`` of an lm-eval KS@N task of ``bank``: every metric of the template (the unscoped spec), then
    the bank's own (scoped to it or to its problems' families), then each of its run metrics' keys (lm-eval reports
    their standard error itself), the hooks by full module path (module docstring)."""
    families = bank_families(bank)
    rows = [{"metric": key, "aggregation": _aggregation(m).replace(f"{_FUNCTION} utils.", f"{_FUNCTION} {KSN_HOOKS}."),
             "higher_is_better": direction(m)}
            for key, m in run_specs("ksn", adapter="lmeval", bank=bank, families=families)]
    for rm in run_metrics_for(bank, families):
        rows += [{"metric": key, "aggregation": f"{_FUNCTION} {RUN_METRIC_HOOKS}.{key}",
                  "higher_is_better": rm.higher_is_better if key == rm.name else None}
                 for key in rm.keys() if key != f"{rm.name}_stderr"]
    return rows


def write_task_yaml(bank: str, task: str, folder: str | Path) -> Path:
    """Write ``<folder>/<task>.yaml``: an lm-eval task of ``bank`` (``BankTask``: everything else is the ub_ksn
    template) with :func:`bank_metric_list`. ``folder`` is the plug-in's own: our installed task folder is refused
    (a ValueError), so that no plug-in's metric reaches a built-in task."""
    from . import tasks_dir

    folder = Path(folder).resolve()
    ours = Path(tasks_dir()).resolve().parent
    if folder == ours or ours in folder.parents:
        raise ValueError(f"{folder} is inside the installed ub_lmeval package; write a plug-in's YAML into its "
                         f"own folder")
    from ub_core.problems import load_bank

    load_bank(bank)  # a one-line error for an unknown bank
    from ruamel.yaml.comments import CommentedMap

    doc = CommentedMap()
    doc["task"] = task
    doc["class"] = _tagged(f"{_FUNCTION} ub_lmeval.selected_task.BankTask")
    doc["metadata"] = CommentedMap(bank=bank)
    doc["metric_list"] = _node(bank_metric_list(bank))
    doc.yaml_set_start_comment(f"lm-eval task {task} (bank {bank}), written by ub_lmeval.metric_lists.write_task_yaml "
                               f"from the metric spec:\nrewrite it (python -m ub_lmeval.metric_lists --bank {bank} "
                               f"--task {task} --out DIR) when the bank's metrics change.")
    out = io.StringIO()
    _yaml().dump(doc, out)
    path = folder / f"{task}.yaml"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def _tagged(value: str):
    from ruamel.yaml.comments import TaggedScalar

    return TaggedScalar(value=value[len(_FUNCTION) + 1:], tag=_FUNCTION)


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
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    seq = CommentedSeq()
    for row in rows:
        item = CommentedMap()
        for k, v in row.items():
            if isinstance(v, str) and v.startswith(f"{_FUNCTION} "):
                v = _tagged(v)
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
    ap.add_argument("--bank", help="a plug-in's bank: write its task YAML (with --task and --out) instead")
    ap.add_argument("--task", help="the lm-eval task name of --bank's YAML")
    ap.add_argument("--out", help="the plug-in's own folder for --bank's YAML")
    args = ap.parse_args(argv)
    if args.bank:
        if not (args.task and args.out):
            ap.error("--bank needs --task and --out")
        try:
            print(f"wrote {write_task_yaml(args.bank, args.task, args.out)}")
        except ValueError as e:
            print(f"python -m ub_lmeval.metric_lists: {e}", file=sys.stderr)
            return 2
        return 0
    stale = [rel for rel, key, eval_family, filt in SPEC_YAMLS
             if not sync(Path(args.tasks_dir) / rel, key, eval_family, filt, write=args.write)]
    for rel in stale:
        print(f"{'rewrote' if args.write else 'differs from the spec'}: {rel}")
    return 1 if stale and not args.write else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
