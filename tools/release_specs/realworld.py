"""Real-world programs the AST rules cannot read, derived by hand (exact enumeration or integration), and the
release's answer mapping of each real-world uid."""
from __future__ import annotations

import collections
import itertools
import json
import math

import numpy as np

from .release import git
from .samplers import num
from .laws import Law


# Exact outcome distributions of the real-world programs the generic rules cannot model (functions/classes,
# generator expressions, data-dependent loops). Derived by hand from the program text (facts about the release),
# then computed here by enumeration or numerical integration.

RW_DESCRIPTION = {
    "055818d5": "random ordering of 5 objects A-E, one per line",
    "06484ed3": "two groups ({A,B}, {1,2}) listed in random order, one random member printed per group",
    "0c05ec86": "three labelled groups (vowels/consonants/digits) in random order, each with a random member",
    "22b4c8f7": "uniform pick of one of 2 labels (A, B)",
    "24dd7917": "an event of probability 0.1 prints 1, otherwise 2",
    "2ae92ae8": "uniform pick of one of 3 labels (A, B, C)",
    "41b48a16": "a uniformly random number (0-3) of objects A-C collected in random order, or '(no output)'",
    "4328470e": "four messages (Alpha..Delta) with iid Uniform(0,100) delays; the first to arrive",
    "495df063": "counter starting at 100, incremented in each of 100 steps with probability 0.9; final value",
    "64b5842a": "standard-normal reading bucketed: < 0 -> A, [0, 1) -> B, >= 1 -> C",
    "69a1d67d": "uniform pick of one of 3 labels (A, B, C)",
    "6ab4349d": "uniform pick of one of 3 labels (A, B, C)",
    "7a1fe43e": "uniform pick of one of 2 labels (A, B)",
    "8843cf28": "'parent' and 'child' lines in random order",
    "975577ef": "uniform pick of one of 3 labels (A, B, C)",
    "9843572d": "race of packets X, Y over identical links (40 + U(-10,10)) and router delay U(0,20); first processed",
    "99ba8a6f": ("parent and child each print both thread names (p 0.1) or one random thread; "
                 "lines interleaved at random"),
    "9ee2ce7d": "uniform pick between the orders 'AB' and 'BA'",
    "a99b8031": "random ordering of A, B, one per line",
    "abe99455": "one state-machine step: A/B/C with probabilities 0.2/0.5/0.3",
    "ac50a73d": "uniform pick of one of 3 labels (A, B, C)",
    "b3c2bd87": "four packets, channel delays 20/35/25/30 + U(-10,10), switch U(0,10), server U(0,10); first received",
    "bf238170": "uniform pick of one of 3 labels (A, B, C)",
    "bf34e215": "two packets on paths with base latency 50 and 70 plus U(-20,20) each; first to arrive",
    "c0c46088": "merge of two queues AAA and BBB, picking a non-empty queue at random each step; the 6-letter sequence",
    "c24f0c53": "delete A, B, C in random order; 'Deleting X' lines",
    "db145ef3": "uniform pick of one of 3 labels (A, B, C)",
    "e329c07f": "load balancer picking Replica A or Replica B uniformly",
    "e5938429": "four streams (Red, Blue, Green, Yellow) with iid Uniform(0,100) times; the first",
    "ffff0598": "uniform pick among 3 workflow actions (validate_input, retry_request, escalate_issue)",
}


def _cat(outcomes: dict, pattern: str) -> Law:
    labels = list(outcomes)
    return Law("categorical", {"pvals": num([outcomes[k] for k in labels]), "labels": labels}, pattern,
               notes=["derived by hand from the program, probabilities computed by enumeration/integration"])


def _rw_06484ed3():
    groups = [["A", "B"], ["1", "2"]]
    out = collections.OrderedDict()
    for order in itertools.permutations(groups):
        for picks in itertools.product(*order):
            out["\n".join(picks)] = out.get("\n".join(picks), 0) + 0.5 / 4
    return _cat(out, "random group order x random member per group")


def _rw_0c05ec86():
    groups = [("vowels", "AEI"), ("consonants", "BCD"), ("digits", "123")]
    out = collections.OrderedDict()
    for order in itertools.permutations(groups):
        for v, c, d in itertools.product("AEI", "BCD", "123"):
            m = {"vowels": v, "consonants": c, "digits": d}
            key = "\n".join(f"{name}: {m[name]}" for name, _ in order)
            out[key] = out.get(key, 0) + 1.0 / (6 * 27)
    return _cat(out, "shuffle of 3 groups x independent uniform members")


def _rw_41b48a16():
    out = collections.OrderedDict()
    objs = ["A", "B", "C"]
    for k in range(4):
        perms = list(itertools.permutations(objs, k))
        for pr in perms:
            key = "\n".join(pr) if pr else "(no output)"
            out[key] = out.get(key, 0) + 0.25 / len(perms)
    return _cat(out, "k ~ U{0..3}; ordered random k-subset of A-C")


def _rw_uniform_labels(labels):
    def f():
        return _cat(collections.OrderedDict((x, 1.0 / len(labels)) for x in labels),
                    "argmin of iid continuous times (each label equally likely)")
    return f


def _rw_495df063():
    values = list(range(100, 201))
    pv = [math.comb(100, k) * 0.9 ** k * 0.1 ** (100 - k) for k in range(101)]
    return Law("empirical_discrete", {"values": values, "pvals": num(pv)}, "100 + Binomial(100, 0.9)",
               notes=["equivalently Binomial(n=100, p=0.9) shifted by +100 (our binomial has no shift)"],
               extra={"shifted_binomial": {"n": 100, "p": 0.9, "shift": 100}})


def _rw_bf34e215():
    # A = 50 + U(-20,20), B = 70 + U(-20,20); P(B < A) = P(D > 20), D = U1 - U2 triangular on [-40, 40]
    p_b = (40 - 20) ** 2 / (2 * 40 ** 2)
    return _cat(collections.OrderedDict([("A", 1 - p_b), ("B", p_b)]), "race of two uniform latencies")


def _rw_9843572d():
    return _cat(collections.OrderedDict([("X", 0.5), ("Y", 0.5)]), "race of two iid delays (symmetric)")


def _rw_b3c2bd87():
    h = 0.001
    grid_v = np.full(int(20 / h), 1 / 20)      # U(-10, 10)
    grid_s = np.full(int(10 / h), 1 / 10)      # U(0, 10)
    dens = np.convolve(np.convolve(grid_v, grid_s) * h, grid_s) * h   # density of V + S + R on [-10, 30]
    t = -10 + h * (np.arange(dens.size) + 0.5)
    cdf = np.cumsum(dens) * h
    bases = {"P1": 20, "P2": 35, "P3": 25, "P4": 30}
    lo, hi = min(bases.values()) - 10, max(bases.values()) + 30
    x = np.arange(lo, hi, h) + h / 2
    f = {k: np.interp(x - b, t, dens, left=0, right=0) for k, b in bases.items()}
    Fc = {k: np.interp(x - b, t, cdf, left=0, right=1) for k, b in bases.items()}
    out = collections.OrderedDict()
    for k in bases:
        surv = np.ones_like(x)
        for j in bases:
            if j != k:
                surv *= 1 - Fc[j]
        out[k] = float(np.sum(f[k] * surv) * h)
    s = sum(out.values())
    out = collections.OrderedDict((k, round(v / s, 5)) for k, v in out.items())
    L = _cat(out, "argmin of base_i + U(-10,10) + U(0,10) + U(0,10)")
    L.notes.append("numerical integration (grid 0.001), about 4-5 correct digits")
    return L


def _rw_99ba8a6f():
    P = ["parent-thread-1", "parent-thread-2"]
    Cn = ["child-thread-1", "child-thread-2"]
    popts = [(tuple(P), 0.1), ((P[0],), 0.45), ((P[1],), 0.45)]
    copts = [(tuple(Cn), 0.1), ((Cn[0],), 0.45), ((Cn[1],), 0.45)]
    out = collections.OrderedDict()
    for (po, pp), (co, cp) in itertools.product(popts, copts):
        items = list(po) + list(co)
        perms = list(itertools.permutations(items))
        for pr in perms:
            key = "\n".join(pr)
            out[key] = out.get(key, 0) + pp * cp / len(perms)
    return _cat(out, "each side prints both threads w.p. 0.1 else one random thread; uniform interleaving")


def _rw_c0c46088():
    out = collections.OrderedDict()

    def rec(a, b, seq, p):
        if a == 0 and b == 0:
            out[seq] = out.get(seq, 0) + p
            return
        if a > 0 and b > 0:
            rec(a - 1, b, seq + "A", p / 2)
            rec(a, b - 1, seq + "B", p / 2)
        elif a > 0:
            rec(a - 1, b, seq + "A", p)
        else:
            rec(a, b - 1, seq + "B", p)
    rec(3, 3, "", 1.0)
    return _cat(out, "random choice between non-empty queues until both are empty")


def _rw_c24f0c53():
    return Law("uniform_permutation", {"n": 3}, "random.shuffle of a literal list, lines 'Deleting X'",
               extra={"items": ["A", "B", "C"], "line_format": "Deleting {x}", "joined_with": "\n"})


RW_MANUAL = {
    "06484ed3": _rw_06484ed3, "0c05ec86": _rw_0c05ec86, "41b48a16": _rw_41b48a16,
    "4328470e": _rw_uniform_labels(["Alpha", "Beta", "Gamma", "Delta"]),
    "e5938429": _rw_uniform_labels(["Red", "Blue", "Green", "Yellow"]),
    "495df063": _rw_495df063, "bf34e215": _rw_bf34e215, "9843572d": _rw_9843572d, "b3c2bd87": _rw_b3c2bd87,
    "99ba8a6f": _rw_99ba8a6f, "c0c46088": _rw_c0c46088, "c24f0c53": _rw_c24f0c53,
}


def realworld_answer_types() -> dict[str, dict]:
    data = json.loads(git("show", "HEAD:realworld_mapping.json"))
    out = {}
    for group, spec in data.items():
        for u in spec.get("uids:", []):
            md = u.get("metadata", {}) or {}
            out[u["value"]] = {"group": group, "how_to_handle": spec.get("how_to_handle"),
                               "type": md.get("type"), "possible_outcomes": md.get("possible_outcomes")
                               or (len(md["mapping"]) if md.get("mapping") else None),
                               "number_of_lines": md.get("number_of_lines"),
                               "lines": [md.get("min_lines"), md.get("max_lines")] if "min_lines" in md else None,
                               "mapping_labels": list(md["mapping"]) if md.get("mapping") else None}
    return out
