"""``-T ks_ns=3,7,30`` changes only the per-N metrics (KS@N, p@N, short@N): WDZ, W1, JSD, ``constant`` and every
other metric that is not per-N use all valid values, as documented, whatever the Ns (they used the first max(ns))."""

from __future__ import annotations

import pytest

from ub_core.ksn_scoring import score_values
from ub_core.metric_spec import split_key
from ub_core.problems import load_bank


def _not_per_n(row: dict) -> dict:
    return {k: v for k, v in row.items() if split_key(k)[1] is None}


@pytest.mark.parametrize("ns", [(3, 7, 30), (1,), (5, 50), (100,)])
def test_ks_ns_leaves_the_other_metrics_alone(ns):
    bank = list(load_bank("ksn"))
    picked = {}
    for p in bank:
        picked.setdefault(p.support, p)
    for p in picked.values():
        # the first 30 values collapsed, the rest spread: a truncation to max(ns) changes every non-per-N metric
        vals = [float(p.draw(1, 3)[0])] * 30 + [float(v) for v in p.draw(70, 4)]
        full = score_values(p, vals, ns=(100,), wdz_resamples=199)
        some = score_values(p, vals, ns=ns, wdz_resamples=199)
        assert _not_per_n(some) == _not_per_n(full), (p.id, ns)
        assert some["n_valid"] == 100
        assert not full["constant"]
