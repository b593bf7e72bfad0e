"""The 30 real-world scenarios of the KS@N bank (UnpredictaBench, sec. 3.1 item 7 and appendix B), one per
real-world program of the public release.

Each scenario simulates the same system as one release program (``realworldscenario`` uid ``uid``, row
``release_index`` of the release's questions): the system, its parameters, the item names and the printed output
format carry over; the wording of the prompts is ours. Subcategories (counts): ``os_concurrency`` 7,
``garbage_collection`` 5, ``network`` 5, ``distributed_systems`` 5, ``hashing`` 4, ``mcmc`` 4; within a
subcategory the scenarios are ordered by ``release_index``.

Every scenario states its stochastic model completely (scheduler, latency laws, hash laws, proposal and acceptance
rules), so its outcome distribution is determined, and that distribution is computed *exactly* here, with
:class:`fractions.Fraction` arithmetic: by enumerating every thread interleaving under the stated scheduler, by
enumerating all random choices, by convolution, by exact matrix powers of a Markov kernel, or by exact piecewise
polynomial integration where continuous uniform latencies race (the one normal probability, Phi(1), is the
double nearest to it). Nothing is simulated.

The outcome is either

- a label (``answer_format="option"``, ``family="categorical"``), possibly a multi-line printed output; the scored
  scalar is the 0-based index of the label in ``options`` (the label order of the release's mapping);
- an integer (``answer_format="integer"``, ``family="empirical_discrete"``); the scored scalar is the integer; or
- an ordering of printed lines (``answer_format="permutation"``, ``family="uniform_permutation"``), built as the
  shuffling problems are (:mod:`.shuffling`): the scored scalar is Lehmer Z1 relative to the lines as listed in
  ``options``.

``metadata["exact_pmf"]`` maps each label (or integer value, or Z1 value) to its probability as a float, and
``metadata["exact_pmf_fraction"]`` gives the same probabilities as exact ``"p/q"`` strings.
``metadata["release_index"]`` is the row of the release question; ``Problem.uid`` is its uid.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from ..base import Problem
from ..exact_pmf import F, pmf_modality
from .constants import BANK, BANK_VERSION
from .shuffling import z1_pmf
from .realworld_systems import (
    _distributed_systems,
    _garbage_collection,
    _hashing,
    _mcmc,
    _network,
    _os_concurrency,
)

__all__ = ["realworld_problems", "realworld_specs", "SUBCATEGORY_COUNTS"]

SUBCATEGORY_COUNTS = {"os_concurrency": 7, "garbage_collection": 5, "network": 5, "distributed_systems": 5,
                      "hashing": 4, "mcmc": 4}


_BUILDERS = (("os_concurrency", _os_concurrency), ("garbage_collection", _garbage_collection),
             ("network", _network), ("distributed_systems", _distributed_systems), ("hashing", _hashing),
             ("mcmc", _mcmc))


def realworld_specs() -> list[dict]:
    """The scenarios as plain dicts: id, uid, release_index, subcategory, title, form, kind, prompt and the exact
    pmf (Fractions) of the printed outcome.

    For ``kind == "option"`` the pmf's key order is the option order; integer pmfs are sorted by value; for
    ``kind == "permutation"`` the pmf is over the printed outputs (the lines joined by newlines) and the dict
    also gives ``items`` and, where each line decorates its item, ``line_format``.
    """
    return [{**spec, "pmf": dict(spec["pmf"])} for spec in _specs()]


@lru_cache(maxsize=1)
def _specs() -> tuple[dict, ...]:
    specs = []
    for sub, build in _BUILDERS:
        items = sorted(build(), key=lambda spec: spec["release_index"])
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


def _lines(spec: dict) -> tuple[str, ...]:
    """The printed lines of a permutation scenario, in the order of its items."""
    fmt = spec.get("line_format", "{x}")
    return tuple(fmt.format(x=x) for x in spec["items"])


def _make_permutation(spec: dict, common: dict) -> Problem:
    """A permutation scenario, built as the shuffling problems are: family ``uniform_permutation``, scored on
    Lehmer Z1 relative to the printed lines as listed in ``options``."""
    options = _lines(spec)
    n = len(options)
    uniform = F(1, math.factorial(n))
    if len(set(options)) != n or set(spec["pmf"]) != {"\n".join(p) for p in itertools.permutations(options)} \
            or any(q != uniform for q in spec["pmf"].values()):
        raise RuntimeError(f"{spec['id']}: a permutation scenario must print its distinct lines in uniform order")
    pmf = z1_pmf(n)
    common["metadata"].update({"items": list(spec["items"]), "line_format": spec.get("line_format", "{x}"),
                               "exact_pmf": {float(z): float(q) for z, q in pmf.items()},
                               "exact_pmf_fraction": {str(z): str(q) for z, q in pmf.items()}})

    def sampler(rng: np.random.Generator, size: int, _n=n) -> np.ndarray:
        return rng.integers(0, _n, size=size) / (_n - 1)

    return Problem(family="uniform_permutation", params={"n": n, "items": list(options)}, modality="unimodal",
                   support="permutation", answer_format="permutation", options=options, low=0.0, high=1.0,
                   sampler=sampler, **common)


def _make_problem(spec: dict) -> Problem:
    pmf: dict = spec["pmf"]
    keys = list(pmf)
    pvals = [float(q) for q in pmf.values()]
    metadata = {"title": spec["title"], "form": spec["form"], "release_index": spec["release_index"],
                "exact_pmf": {k: float(q) for k, q in pmf.items()},
                "exact_pmf_fraction": {k: str(q) for k, q in pmf.items()}}
    common = dict(id=spec["id"], bank=BANK, bank_version=BANK_VERSION, category="real_world", task_type="real_world",
                  subcategory=spec["subcategory"], regime="none", prompt=spec["prompt"], metadata=metadata,
                  uid=spec["uid"])
    if spec["kind"] == "permutation":
        return _make_permutation(spec, common)
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
    """The 30 real-world problems, in a stable order (subcategory, then release index)."""
    return [_make_problem(s) for s in realworld_specs()]
