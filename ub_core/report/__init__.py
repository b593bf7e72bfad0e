"""``ub report``: Inspect logs and lm-eval output -> one HTML page with PNG figures, plus CSV / JSON / Markdown
summaries for dashboards.

    from ub_core.report import build_report
    result = build_report(["logs/", "lm_out/"], "report/")

Readers (:mod:`.readers`) normalise every input into one tidy per-sample table (:mod:`.records`); each eval family
(:mod:`.eval_families`) owns its key names; :mod:`.summary` aggregates, :mod:`.figures` draws (matplotlib, Agg),
:mod:`.html` renders (jinja2). matplotlib, jinja2 and inspect_ai are imported only when needed
(``pip install 'unpredictabench[report]'``).
"""

from __future__ import annotations

from .eval_families import EVAL_FAMILIES, EVAL_FAMILY_NAMES
from .readers import load_inputs
from .records import SampleRecord, SampleTable, Skip

__all__ = ["build_report", "ReportResult", "load_inputs", "SampleRecord", "SampleTable", "Skip", "EVAL_FAMILIES",
           "EVAL_FAMILY_NAMES"]


def __getattr__(name):  # build_report pulls in numpy/scipy metrics; keep `import ub_core.report` light
    if name in ("build_report", "ReportResult"):
        from . import html

        return getattr(html, name)
    raise AttributeError(name)
