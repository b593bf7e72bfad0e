"""The 30 hand-written real-world scenarios of the KS@N bank (UnpredictaBench, sec. 3.1 item 7 and appendix B).

Subcategories and counts follow the published composition: ``os_concurrency`` 6, ``garbage_collection`` 6,
``network`` 5, ``distributed_systems`` 5, ``hashing`` 4, ``mcmc`` 4. The scenarios themselves and their wording
are ours: the published 30 are not released as text we could reuse, so these are new scenarios of the same kinds.

Every scenario states its stochastic model completely (scheduler, latency laws, hash laws, proposal and acceptance
rules), so its outcome distribution is determined, and that distribution is computed *exactly* here, with
:class:`fractions.Fraction` arithmetic: by enumerating every thread interleaving under the stated scheduler, by
enumerating all random choices, by convolution, or by exact matrix powers of a Markov kernel. Nothing is simulated.

The outcome is either

- a label (``answer_format="option"``, ``family="categorical"``), possibly a multi-line printed output; the scored
  scalar is the 0-based index of the label in ``options``; or
- an integer (``answer_format="integer"``, ``family="empirical_discrete"``); the scored scalar is the integer.

``metadata["exact_pmf"]`` maps each label (or integer value) to its probability as a float, and
``metadata["exact_pmf_fraction"]`` gives the same probabilities as exact ``"p/q"`` strings.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..base import Problem
from ..exact_pmf import F, pmf_modality
from .bank import BANK_VERSION
from .realworld_systems import (
    _distributed_systems,
    _garbage_collection,
    _hashing,
    _mcmc,
    _network,
    _os_concurrency,
)

__all__ = ["realworld_problems", "realworld_specs", "SUBCATEGORY_COUNTS"]

BANK = "ksn"
SUBCATEGORY_COUNTS = {"os_concurrency": 6, "garbage_collection": 6, "network": 5, "distributed_systems": 5,
                      "hashing": 4, "mcmc": 4}


_BUILDERS = (("os_concurrency", _os_concurrency), ("garbage_collection", _garbage_collection),
             ("network", _network), ("distributed_systems", _distributed_systems), ("hashing", _hashing),
             ("mcmc", _mcmc))


def realworld_specs() -> list[dict]:
    """The scenarios as plain dicts: id, subcategory, title, form, kind, prompt and the exact pmf (Fractions).

    For ``kind == "option"`` the pmf's key order is the option order; integer pmfs are sorted by value.
    """
    return [{**spec, "pmf": dict(spec["pmf"])} for spec in _specs()]


@lru_cache(maxsize=1)
def _specs() -> tuple[dict, ...]:
    specs = []
    for sub, build in _BUILDERS:
        items = build()
        if len(items) != SUBCATEGORY_COUNTS[sub]:
            raise RuntimeError(f"{sub}: expected {SUBCATEGORY_COUNTS[sub]} scenarios, built {len(items)}")
        for i, spec in enumerate(items, start=1):
            pmf = spec["pmf"]
            if spec["kind"] == "integer":
                pmf = {int(v): F(pmf[v]) for v in sorted(pmf) if pmf[v] > 0}
            else:
                pmf = {str(k): F(v) for k, v in pmf.items()}
            if sum(pmf.values()) != 1 or any(q < 0 for q in pmf.values()):
                raise RuntimeError(f"rw-{sub}-{i:02d}: probabilities do not form a distribution")
            specs.append({**spec, "id": f"rw-{sub}-{i:02d}", "subcategory": sub, "pmf": pmf})
    return tuple(specs)


def _make_problem(spec: dict) -> Problem:
    pmf: dict = spec["pmf"]
    keys = list(pmf)
    pvals = [float(q) for q in pmf.values()]
    metadata = {"title": spec["title"], "form": spec["form"],
                "exact_pmf": {k: float(q) for k, q in pmf.items()},
                "exact_pmf_fraction": {k: str(q) for k, q in pmf.items()}}
    common = dict(id=spec["id"], bank=BANK, bank_version=BANK_VERSION, category="real_world", task_type="real_world",
                  subcategory=spec["subcategory"], regime="none", prompt=spec["prompt"], metadata=metadata)
    if spec["kind"] == "option":
        labels = tuple(keys)

        def sampler(rng: np.random.Generator, size: int, _p=tuple(pvals)) -> np.ndarray:
            return rng.choice(len(_p), size=size, p=list(_p)).astype(float)

        return Problem(family="categorical", params={"pvals": pvals, "labels": list(labels)},
                       modality="unimodal", support="categorical", answer_format="option", options=labels,
                       low=0.0, high=float(len(labels) - 1), sampler=sampler, **common)
    values = [int(v) for v in keys]

    def sampler(rng: np.random.Generator, size: int, _v=np.asarray(values, dtype=float),
                _p=tuple(pvals)) -> np.ndarray:
        return _v[rng.choice(len(_p), size=size, p=list(_p))]

    return Problem(family="empirical_discrete", params={"values": values, "pvals": pvals},
                   modality=pmf_modality(pmf), support="discrete", answer_format="integer",
                   low=float(min(values)), high=float(max(values)), sampler=sampler, **common)


def realworld_problems() -> list[Problem]:
    """The 30 real-world problems, in a stable order (subcategory, then number)."""
    return [_make_problem(s) for s in realworld_specs()]
