"""Family classification rules: the law (family, params, pattern) of a folded output expression (inverse-CDF
transforms, compound draws, ratios, mixtures, affine maps)."""
from __future__ import annotations

import ast
import collections
import math

import numpy as np

from .symbolic import C, fname, has_unknown, isc, isnum, show, Unclassifiable
from .samplers import is_const_val, num, sc
from .folding import _norm_ppf, is_std_normal
from .statements import bernoulli_prob, scalar_cdf


class Law:
    def __init__(self, family, params, pattern, notes=None, extra=None):
        self.family, self.params, self.pattern = family, params, pattern
        self.notes = list(notes or [])
        self.extra = dict(extra or {})

    def __repr__(self):
        return f"Law({self.family}, {self.params}, {self.pattern})"


def linear(n):
    """n = const + sum(coef * term) with numeric const/coefs; terms are non-linear atoms."""
    if isnum(n):
        return float(n.value), []
    if isinstance(n, ast.BinOp):
        if isinstance(n.op, (ast.Add, ast.Sub)):
            c1, t1 = linear(n.left)
            c2, t2 = linear(n.right)
            s = 1.0 if isinstance(n.op, ast.Add) else -1.0
            return c1 + s * c2, t1 + [(s * k, t) for k, t in t2]
        if isinstance(n.op, ast.Mult):
            if isnum(n.left):
                c, t = linear(n.right)
                k = float(n.left.value)
                return k * c, [(k * a, b) for a, b in t]
            if isnum(n.right):
                c, t = linear(n.left)
                k = float(n.right.value)
                return k * c, [(k * a, b) for a, b in t]
        if isinstance(n.op, ast.Div) and isnum(n.right):
            c, t = linear(n.left)
            k = 1.0 / float(n.right.value)
            return k * c, [(k * a, b) for a, b in t]
        if isinstance(n.op, ast.Mult):  # (k * X) * Y -> k * (X * Y)
            for side in ("left", "right"):
                c, t = linear(getattr(n, side))
                if abs(c) < 1e-300 and len(t) == 1 and abs(t[0][0] - 1) > 1e-15:
                    other = n.right if side == "left" else n.left
                    prod = ast.BinOp(left=t[0][1], op=ast.Mult(), right=other) if side == "left" \
                        else ast.BinOp(left=other, op=ast.Mult(), right=t[0][1])
                    return 0.0, [(t[0][0], prod)]
    if isinstance(n, ast.UnaryOp):
        if isinstance(n.op, ast.USub):
            c, t = linear(n.operand)
            return -c, [(-a, b) for a, b in t]
        if isinstance(n.op, ast.UAdd):
            return linear(n.operand)
    return 0.0, [(1.0, n)]


def merge_terms(terms, ctx):
    out: dict[str, list] = {}
    for k, t in terms:
        key = ast.dump(t) if not isinstance(t, ast.AST) else show_key(t)
        if key in out:
            out[key][0] += k
        else:
            out[key] = [k, t]
    return [(k, t) for k, t in out.values() if abs(k) > 0]


def show_key(t):
    try:
        return ast.dump(t)
    except Exception:  # noqa: BLE001
        return repr(id(t))


def std_uniform(n, ctx):
    d = ctx.as_draw(n)
    return d is not None and d.kind == "uniform" and d.size is None \
        and all(is_const_val(v) for v in d.params.values()) \
        and abs(d.params["low"]) < 1e-9 and abs(d.params["high"] - 1) < 1e-9 and d


def uniform_like(n, ctx):
    """The U(0,1) draw u when n is u or 1 - u (same law)."""
    if std_uniform(n, ctx):
        return ctx.as_draw(n)
    c, t = linear(n)
    if len(t) == 1 and abs(c - 1) < 1e-12 and abs(t[0][0] + 1) < 1e-12 and std_uniform(t[0][1], ctx):
        return ctx.as_draw(t[0][1])
    return None


def neg_log_uniform(n, ctx):
    """True when n = -log(U) (or -log(1-U)), an Exp(1) variable."""
    c, t = linear(n)
    return abs(c) < 1e-12 and len(t) == 1 and abs(t[0][0] + 1) < 1e-12 and fname(t[0][1]) == "log" \
        and uniform_like(t[0][1].args[0], ctx) is not None


def law(n, ctx) -> Law:
    u = has_unknown(n)
    if u is not None:
        raise Unclassifiable(f"depends on code the static analyser does not model: {u[:120]}")
    if isc(n):
        return Law("constant", {"value": num(n.value)}, "constant")
    d = ctx.as_draw(n)
    if d is not None:
        return law_of_draw(d, ctx)
    special = special_law(n, ctx)
    if special is not None:
        return special
    c, terms = linear(n)
    terms = merge_terms(terms, ctx)
    if not terms:
        return Law("constant", {"value": c}, "constant")
    if len(terms) == 1:
        a, core = terms[0]
        if a == 1 and abs(c) < 1e-15 and core is n:
            base, a0, b0, pat = core_law(core, ctx)
            return affine_law(base, a0, b0, pat)
        base, a0, b0, pat = core_law(core, ctx)
        return affine_law(base, a * a0, a * b0 + c, pat)
    return multi_term_law(c, terms, ctx)


def special_law(n, ctx):
    fn = fname(n)
    if isinstance(n, ast.Subscript):
        return subscript_law(n, ctx)
    if isinstance(n, ast.IfExp):
        return ifexp_law(n, ctx)
    if isinstance(n, ast.Compare):
        p = bernoulli_prob(n, ctx)
        if p is not None:
            return Law("bernoulli", {"p": num(p)}, "indicator: U < p")
        raise Unclassifiable(f"comparison not modelled: {show(n, ctx)}")
    if fn == "max" and len(n.args) == 2:
        a, b = n.args
        inner = b if isnum(a) else a if isnum(b) else None
        zero = a if isnum(a) else b
        if inner is not None and zero.value == 0:
            L = law(inner, ctx)
            if L.family == "normal":
                return Law("rectified_gaussian", dict(L.params), "max(0, normal)")
        raise Unclassifiable(f"max() not modelled: {show(n, ctx)}")
    if fn in ("sum",):
        return sum_law(n.args[0], ctx)
    if fn == "dot":
        d = ctx.as_draw(n.args[0])
        w = n.args[1]
        if d is not None and d.kind == "multinomial" and isc(w) and sc(d.params):
            return Law("multinomial_weighted_sum", {"n": num(d.params["n"]), "values": num(w.value),
                                                    "pvals": num(d.params["pvals"])},
                       "dot(multinomial counts, values) = sum of n iid categorical values")
        raise Unclassifiable(f"dot() not modelled: {show(n, ctx)}")
    if fn == "join":
        d = ctx.as_draw(n.args[1]) if len(n.args) > 1 else None
        if d is not None and d.kind == "shuffle":
            return shuffle_law(d, joined=n.args[0].value)
        raise Unclassifiable(f"string join not modelled: {show(n, ctx)}")
    if fn == "ceil":
        inner = n.args[0]
        c, t = linear(inner)
        if abs(c) < 1e-12 and len(t) == 1 and fname(t[0][1]) == "log" and uniform_like(t[0][1].args[0], ctx):
            k = t[0][0]  # log(U) * k with k = 1/log(1-p) < 0
            if k < 0:
                return Law("geometric", {"p": num(1.0 - math.exp(1.0 / k))}, "ceil(log U / log(1-p)) (inverse CDF)")
        raise Unclassifiable(f"ceil() not modelled: {show(n, ctx)}")
    return None


def subscript_law(n, ctx):
    v, s = n.value, n.slice
    if not isc(s):
        raise Unclassifiable(f"symbolic index: {show(n, ctx)}")
    idx = s.value
    d = ctx.as_draw(v)
    if d is None:
        raise Unclassifiable(f"subscript of a non-draw: {show(n, ctx)}")
    size1 = d.size is not None and isnum(d.size) and d.size.value == 1
    if isinstance(idx, tuple) and len(idx) == 2 and size1 and idx[0] == 0:
        idx = idx[1]
    elif size1 and d.kind not in ("dirichlet", "multinomial", "multivariate_normal", "multivariate_t",
                                  "negmult_counts") and idx == 0:
        return law_of_draw(d, ctx, allow_size1=True)
    elif size1 and idx == 0:
        # dirichlet.rvs(alpha, size=1)[0] -> still the vector
        return law_of_vector(d, ctx)
    if d.kind == "choices" and idx == 0:
        return choice_law(d.params["values"], d.params["pvals"], "random.choices(...)[0]")
    return component_law(d, int(idx), ctx)


def law_of_vector(d, ctx):
    raise Unclassifiable(f"vector-valued {d.kind} without a component index")


def component_law(d, i, ctx):
    L = _component_law(d, i, ctx)
    if d.api == "derived":
        L.pattern += f" [vector built as {d.text}]"
    return L


def _component_law(d, i, ctx):
    p = d.params
    if not sc(p):
        raise Unclassifiable(f"symbolic parameters of {d.kind}")
    if d.kind == "dirichlet":
        return Law("dirichlet", {"alpha": num(p["alpha"]), "component": i}, f"dirichlet coordinate {i}")
    if d.kind == "multinomial":
        return Law("multinomial", {"n": num(p["n"]), "pvals": num(p["pvals"]), "component": i},
                   f"multinomial count {i}")
    if d.kind == "multivariate_normal":
        return Law("multivariate_normal", {"mean": num(p["mean"]), "cov": num(p["cov"]), "component": i},
                   f"multivariate normal coordinate {i}")
    if d.kind == "multivariate_t":
        return Law("multivariate_t", {"loc": num(p["loc"]), "shape": num(p["shape"]), "df": num(p["df"]),
                                      "component": i}, f"multivariate t coordinate {i}")
    if d.kind == "negmult_counts":
        return negmult_law(d, [i], "negative multinomial count")
    raise Unclassifiable(f"component of {d.kind}")


def negmult_law(d, idxs, pattern):
    p = d.params
    inv = {}
    for o, j in p["count_index"].items():
        inv.setdefault(j, []).append(o)
    outcomes = sorted({o for j in idxs for o in inv.get(j, [])})
    if p["stop"] in outcomes:
        raise Unclassifiable("negative multinomial count includes the stopping outcome")
    probs = dict(zip(p["values"], p["probs"]))
    p_stop = probs[p["stop"]]
    others = [o for o in p["values"] if o != p["stop"]]
    if len(outcomes) == 1:
        o = outcomes[0]
        pv = [p_stop] + [probs[x] for x in others]
        return Law("negative_multinomial", {"n": num(p["n"]), "pvals": num(pv), "component": others.index(o)},
                   f"{pattern} (while-loop trials until {num(p['n'])} stops)")
    q = sum(probs[o] for o in outcomes)
    return Law("negative_binomial", {"n": num(p["n"]), "p": num(p_stop / (p_stop + q))},
               f"sum of negative multinomial counts = negative binomial ({pattern})",
               notes=[f"counts of outcomes {outcomes} summed; stop probability {num(p_stop)}"])


def choice_law(values, pvals, pattern):
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if not isinstance(values, (list, tuple)):
        raise Unclassifiable("choice over a non-literal population")
    k = len(values)
    pv = [1.0 / k] * k if pvals is None else [float(x) for x in np.asarray(pvals, dtype=float)]
    if all(isinstance(v, str) for v in values):
        return Law("categorical", {"pvals": num(pv), "labels": list(values)}, pattern)
    if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values):
        # merge duplicates
        acc: dict = collections.OrderedDict()
        for v, q in zip(values, pv):
            acc[num(v)] = acc.get(num(v), 0.0) + q
        return Law("empirical_discrete", {"values": list(acc.keys()), "pvals": num(list(acc.values()))}, pattern)
    raise Unclassifiable("choice over mixed / non-scalar items")


def shuffle_law(d, joined=None):
    items = d.params["items"]
    if not isinstance(items, (list, tuple)):
        raise Unclassifiable("shuffle of a non-literal list")
    extra = {"items": list(items)}
    if joined is not None:
        extra["joined_with"] = joined
    return Law("uniform_permutation", {"n": len(items)}, f"{d.api} of a literal list", extra=extra)


def law_of_draw(d, ctx, allow_size1=False) -> Law:
    if d.size is not None and not allow_size1:
        if not (isnum(d.size) and d.size.value == 1):
            raise Unclassifiable(f"vector draw {d.kind}(size={show(d.size, ctx)}) used as the output")
    p = d.params
    pattern = f"direct {d.api}" if d.api not in ("derived", "while-loop", "for-loop") else d.text
    if d.kind == "shuffle":
        return shuffle_law(d)
    if d.kind == "choice":
        if not sc({k: v for k, v in p.items()}):
            raise Unclassifiable("choice with symbolic population/probabilities")
        return choice_law(p["values"], p["pvals"], pattern)
    if d.kind in ("choices", "sample"):
        raise Unclassifiable(f"{d.kind} output (list) not modelled")
    if d.kind in ("dirichlet", "multinomial", "multivariate_normal", "multivariate_t", "negmult_counts"):
        raise Unclassifiable(f"vector-valued {d.kind} printed without a component")
    if sc(p):
        if d.kind == "binomial" and np.ndim(p["n"]) == 0 and np.ndim(p["p"]) > 0:
            raise Unclassifiable("vector of Bernoulli trials printed without summing")
        return Law(d.kind, {k: num(v) for k, v in p.items()}, pattern)
    return compound_draw_law(d, ctx)


def compound_draw_law(d, ctx) -> Law:
    """A draw whose parameters are themselves random."""
    p = d.params
    sym = {k: v for k, v in p.items() if isinstance(v, ast.AST)}
    inner = {}
    for v in sym.values():
        for x in ast.walk(v):
            dd = ctx.as_draw(x)
            if dd is not None:
                inner[dd.id] = dd
    if d.kind == "binomial" and set(sym) == {"p"} and ctx.as_draw(p["p"]) is not None:
        b = ctx.as_draw(p["p"])
        if b.kind == "beta" and sc(b.params):
            return Law("beta_binomial", {"n": num(p["n"]), "a": num(b.params["a"]), "b": num(b.params["b"])},
                       "beta -> binomial compound (p ~ Beta(a, b), X ~ Binomial(n, p))")
    if len(inner) == 1:
        r = next(iter(inner.values()))
        if r.kind == "rayleigh" and sc(r.params):
            sigma = r.params["scale"]
            kp = {}
            for k, v in p.items():
                if isinstance(v, ast.AST):
                    c, t = linear(v)
                    t = merge_terms(t, ctx)
                    if len(t) == 1 and ctx.as_draw(t[0][1]) is r:
                        kp[k] = {"const": num(c), "coef_R": num(t[0][0])}
                    else:
                        kp[k] = {"expr": show(v, ctx)}
                else:
                    kp[k] = num(v)
            if d.kind == "normal" and kp.get("loc") == 0 and kp.get("scale") == {"const": 0.0, "coef_R": 1.0}:
                return Law("laplace", {"loc": 0.0, "scale": num(sigma)},
                           "rayleigh mixture: R ~ Rayleigh(s), X ~ Normal(0, R)  => Laplace(0, s)",
                           notes=["normal scale mixture with a Rayleigh scale is exactly Laplace(0, sigma)"],
                           extra={"rayleigh_mixture": {"sigma": num(sigma), "kernel": d.kind, "kernel_params": kp}})
            return Law("rayleigh_mixture", {"sigma": num(sigma), "kernel": d.kind, "kernel_params": kp},
                       f"rayleigh mixture: R ~ Rayleigh(sigma), X ~ {d.kind}(params depending on R)")
    raise Unclassifiable(f"{d.kind} with random parameters {', '.join(sorted(sym))}: "
                         + "; ".join(f"{k}={show(v, ctx)}" for k, v in sym.items()))


def sum_law(x, ctx) -> Law:
    d = ctx.as_draw(x)
    if d is None:
        raise Unclassifiable(f"sum of a non-draw: {show(x, ctx)}")
    p = d.params
    if d.kind == "binomial" and sc(p) and np.ndim(p["p"]) == 1:
        if p["n"] == 1:
            return Law("poisson_binomial", {"p": num(p["p"])}, "sum of Bernoulli(p_i) trials")
        raise Unclassifiable("sum of binomials with n > 1")
    if d.kind == "choice" and sc(p) and p.get("replace") is False and isnum(d.size or C(None)):
        vals = np.asarray(p["values"])
        if set(np.unique(vals).tolist()) <= {0, 1} and p.get("pvals") is None:
            good = int(vals.sum())
            return Law("hypergeometric", {"ngood": good, "nbad": int(len(vals) - good), "nsample": int(d.size.value)},
                       "sum of a sample without replacement from a 0/1 urn")
    if d.kind == "negmult_counts":
        return negmult_law(d, sorted(set(p["count_index"].values())), "sum over the count vector")
    if d.size is not None and not isc(d.size):
        return compound_sum_law(d, d.size, ctx)
    raise Unclassifiable(f"sum of {d.kind} draws not modelled")


def compound_sum_law(d, size_node, ctx) -> Law:
    nd = ctx.as_draw(size_node)
    if nd is None or nd.kind != "poisson" or not sc(nd.params):
        raise Unclassifiable("random-size sum whose count is not a Poisson draw")
    jump = jump_law(d)
    return compound_poisson_law(nd.params["lam"], jump, "sum of N ~ Poisson(lam) iid jumps")


def jump_law(d):
    if not sc(d.params):
        raise Unclassifiable("jump distribution with random parameters")
    if d.kind == "choice":
        return choice_law(d.params["values"], d.params["pvals"], "jump")
    return Law(d.kind, {k: num(v) for k, v in d.params.items()}, "jump")


def compound_poisson_law(lam, jump, pattern):
    if jump.family == "geometric":
        return Law("compound_poisson", {"lam": num(lam), "p": jump.params["p"]}, pattern)
    return Law(f"compound_poisson[{jump.family}]", {"lam": num(lam), "jump": {"family": jump.family,
                                                                               "params": jump.params}}, pattern,
               notes=["our compound_poisson has geometric jump sizes only"])


def ifexp_law(n, ctx) -> Law:
    test, body, orelse = n.test, n.body, n.orelse
    # compound Poisson: 0 if N == 0 else sum of N jumps
    if isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.Eq) and isnum(test.comparators[0]) \
            and test.comparators[0].value == 0 and isnum(body) and body.value == 0:
        nd = ctx.as_draw(test.left)
        if nd is not None and nd.kind == "poisson":
            x = orelse
            if fname(x) == "sum":
                dj = ctx.as_draw(x.args[0])
                if dj is not None and dj.size is not None and ctx.as_draw(dj.size) is nd:
                    return compound_poisson_law(nd.params["lam"], jump_law(dj),
                                                "N ~ Poisson; 0 if N == 0 else sum of N jumps")
            dj = ctx.as_draw(x)
            if dj is not None and dj.kind == "gamma" and isinstance(dj.params["shape"], ast.AST):
                c, t = linear(dj.params["shape"])
                if abs(c) < 1e-12 and len(t) == 1 and ctx.as_draw(t[0][1]) is nd and is_const_val(dj.params["scale"]):
                    jump = Law("gamma", {"shape": num(t[0][0]), "scale": num(dj.params["scale"])}, "jump")
                    how = "N ~ Poisson; Gamma(N*shape, scale) = sum of N Gamma(shape, scale) jumps"
                    return compound_poisson_law(nd.params["lam"], jump, how)
    # triangular inverse CDF
    tri = triangular_ifexp(n, ctx)
    if tri is not None:
        return tri
    ig = inverse_gaussian_ifexp(n, ctx)
    if ig is not None:
        return ig
    # threshold categorical on one continuous draw
    cat = threshold_categorical(n, ctx)
    if cat is not None:
        return cat
    raise Unclassifiable(f"conditional expression not modelled: {show(n, ctx)[:160]}")


def triangular_ifexp(n, ctx):
    t = n.test
    if not (isinstance(t, ast.Compare) and isinstance(t.ops[0], (ast.Lt, ast.LtE)) and isnum(t.comparators[0])):
        return None
    u = std_uniform(t.left, ctx)
    if not u:
        return None
    fc = float(t.comparators[0].value)
    c1, t1 = linear(n.body)
    c2, t2 = linear(n.orelse)
    if not (len(t1) == 1 and len(t2) == 1 and fname(t1[0][1]) == "sqrt" and fname(t2[0][1]) == "sqrt"):
        return None
    a, b = c1, c2
    k1c, k1t = linear(t1[0][1].args[0])
    k2c, k2t = linear(t2[0][1].args[0])
    if not (len(k1t) == 1 and abs(k1c) < 1e-12 and ctx.as_draw(k1t[0][1]) is u and len(k2t) == 1
            and ctx.as_draw(k2t[0][1]) is u):
        return None
    k1 = k1t[0][0]
    mode = a + k1 / (b - a)
    if abs((mode - a) / (b - a) - fc) > 1e-9 or abs(k2c - (b - a) * (b - mode)) > 1e-6 * max(1, abs(k2c)):
        return None
    return Law("triangular", {"left": num(a), "mode": num(mode), "right": num(b)},
               "triangular inverse CDF (if U < (c-a)/(b-a): a + sqrt(U(b-a)(c-a)) else b - sqrt((1-U)(b-a)(b-c)))")


def inverse_gaussian_ifexp(n, ctx):
    t = n.test
    if not (isinstance(t, ast.Compare) and std_uniform(t.left, ctx) and isinstance(t.comparators[0], ast.BinOp)
            and isinstance(t.comparators[0].op, ast.Div) and isnum(t.comparators[0].left)):
        return None
    mu = float(t.comparators[0].left.value)
    o = n.orelse
    if not (isinstance(o, ast.BinOp) and isinstance(o.op, ast.Div) and isnum(o.left)
            and abs(o.left.value - mu * mu) < 1e-9 * max(1, mu * mu)):
        return None
    lam = None
    for x in ast.walk(n.body):
        if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Div) and isnum(x.right):
            if any(ctx.as_draw(y) is not None for y in ast.walk(x.left)):
                lam = float(x.right.value) / 2.0
                break
    if lam is None:
        return None
    return Law("inverse_gaussian", {"mean": num(mu), "scale": num(lam)},
               "Michael-Schucany-Haas transformation (normal^2 + uniform acceptance)")


def threshold_categorical(n, ctx):
    """Nested IfExp on comparisons of one continuous draw with constants, constant leaves."""
    leaves = []
    d_ref = []

    def walk(node, lo, hi):
        if isc(node):
            leaves.append((node.value, lo, hi))
            return True
        if not isinstance(node, ast.IfExp):
            return False
        t = node.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isnum(t.comparators[0])):
            return False
        d = ctx.as_draw(t.left)
        if d is None or scalar_cdf(d) is None:
            return False
        if d_ref and d_ref[0] is not d:
            return False
        d_ref[:1] = [d]
        c = float(t.comparators[0].value)
        if isinstance(t.ops[0], (ast.Lt, ast.LtE)):
            return walk(node.body, lo, min(hi, c)) and walk(node.orelse, max(lo, c), hi)
        if isinstance(t.ops[0], (ast.Gt, ast.GtE)):
            return walk(node.body, max(lo, c), hi) and walk(node.orelse, lo, min(hi, c))
        return False
    if not walk(n, -math.inf, math.inf) or not d_ref:
        return None
    cdf = scalar_cdf(d_ref[0])
    acc: dict = collections.OrderedDict()
    for v, lo, hi in leaves:
        q = max(0.0, (cdf(hi) if hi < math.inf else 1.0) - (cdf(lo) if lo > -math.inf else 0.0))
        acc[v] = acc.get(v, 0.0) + q
    labels, pv = list(acc.keys()), list(acc.values())
    pattern = f"thresholds on one {d_ref[0].kind} draw"
    if all(isinstance(v, str) for v in labels):
        return Law("categorical", {"pvals": num(pv), "labels": labels}, pattern)
    return Law("empirical_discrete", {"values": num(labels), "pvals": num(pv)}, pattern)


def _elementary_core_law(core, fn, ctx):
    """``log``, ``sum(log)``, ``exp``, ``cos``/``sin`` of a draw: (base law, a0, b0, pattern), or None."""
    if fn == "log":
        x = core.args[0]
        if uniform_like(x, ctx):
            return Law("exponential", {"scale": 1.0}, ""), -1.0, 0.0, "log(U) = -Exp(1)"
        if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Div):
            u = std_uniform(x.left, ctx)
            c, t = linear(x.right)
            if u and len(t) == 1 and abs(c - 1) < 1e-12 and abs(t[0][0] + 1) < 1e-12 and ctx.as_draw(t[0][1]) is u:
                return Law("logistic", {"loc": 0.0, "scale": 1.0}, ""), 1.0, 0.0, "log(U/(1-U)) (logistic inverse CDF)"
        if neg_log_uniform(x, ctx):
            return Law("gumbel", {"loc": 0.0, "scale": 1.0}, ""), -1.0, 0.0, "log(-log U) (Gumbel inverse CDF)"
        if fname(x) == "prod":
            dv = ctx.as_draw(x.args[0])
            if dv is not None and dv.kind == "uniform" and isnum(dv.size or C(None)) \
                    and dv.params == {"low": 0.0, "high": 1.0}:
                return Law("gamma", {"shape": int(dv.size.value), "scale": 1.0}, ""), -1.0, 0.0, \
                    "log(prod of k uniforms) = -Gamma(k, 1)"
    if fn == "sum" and fname(core.args[0]) == "log":
        dv = ctx.as_draw(core.args[0].args[0])
        if dv is not None and dv.kind == "uniform" and isnum(dv.size or C(None)) \
                and dv.params == {"low": 0.0, "high": 1.0}:
            return Law("gamma", {"shape": int(dv.size.value), "scale": 1.0}, ""), -1.0, 0.0, \
                "sum of log of k uniforms = -Gamma(k, 1)"
    if fn == "exp":
        L = law(core.args[0], ctx)
        if L.family == "normal":
            return Law("log_normal", {"mean": L.params["loc"], "sigma": L.params["scale"]}, ""), 1.0, 0.0, \
                "exp(normal)"
        if L.family == "uniform":
            r12 = lambda x: float(f"{math.exp(x):.12g}")  # noqa: E731  (exp(log(a)) round-trip noise)
            return Law("reciprocal", {"a": r12(L.params["low"]), "b": r12(L.params["high"])}, ""), \
                1.0, 0.0, "exp(uniform(log a, log b)) (log-uniform)"
    if fn in ("cos", "sin"):
        ang = angle_uniform(core.args[0], ctx)
        if ang:
            return Law("arcsine", {"low": -1.0, "high": 1.0}, ""), 1.0, 0.0, f"{fn}(uniform angle over a full period)"
    return None


def _power_core_law(core, ctx):
    """``X ** e`` (inverse CDFs of Frechet, Weibull, Pareto; sin^2; Z^2) and ``r ** U``: (law, a0, b0, pattern), or
    None."""
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Pow) and isnum(core.right):
        e = float(core.right.value)
        base = core.left
        if neg_log_uniform(base, ctx):
            if e < 0:
                return Law("frechet", {"c": num(-1.0 / e), "scale": 1.0, "loc": 0.0}, ""), 1.0, 0.0, \
                    "(-log U)^(-1/c) (Frechet inverse CDF)"
            return Law("weibull", {"a": num(1.0 / e), "scale": 1.0}, ""), 1.0, 0.0, \
                "(-log(1-U))^(1/k) (Weibull inverse CDF)"
        if std_uniform(base, ctx) and e < 0:
            return Law("pareto", {"a": num(-1.0 / e), "scale": 1.0}, ""), 1.0, 0.0, "U^(-1/a) (Pareto inverse CDF)"
        if fname(base) == "sin" and abs(e - 2) < 1e-12:
            if quarter_period_uniform(base.args[0], ctx) or angle_uniform(base.args[0], ctx):
                return Law("arcsine", {"low": 0.0, "high": 1.0}, ""), 1.0, 0.0, "sin(angle)^2 (arcsine)"
        dz = ctx.as_draw(base)
        if is_std_normal(dz) and dz.size is None and abs(e - 2) < 1e-12:
            return Law("chi_squared", {"df": 1}, ""), 1.0, 0.0, "Z^2 with Z ~ N(0,1)"
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Pow) and isnum(core.left) \
            and std_uniform(core.right, ctx):
        r = float(core.left.value)
        lo, hi = (1.0, r) if r > 1 else (r, 1.0)
        return Law("reciprocal", {"a": num(lo), "b": num(hi)}, ""), 1.0, 0.0, "r^U (log-uniform)"
    return None


def _product_core_law(core, ctx):
    """``X * Y`` (Z*Z, the Gamma boost, the Laplace inverse CDF): (base law, a0, b0, pattern), or None."""
    dz = ctx.as_draw(core.left)
    if is_std_normal(dz) and ctx.as_draw(core.right) is dz:
        return Law("chi_squared", {"df": 1}, ""), 1.0, 0.0, "Z*Z with Z ~ N(0,1)"
    for g_node, pw in ((core.left, core.right), (core.right, core.left)):
        g = ctx.as_draw(g_node)
        if g is not None and g.kind == "gamma" and sc(g.params) and isinstance(pw, ast.BinOp) \
                and isinstance(pw.op, ast.Pow) and std_uniform(pw.left, ctx) and isnum(pw.right):
            shape = g.params["shape"] - 1.0
            if shape > 0 and abs(1.0 / shape - pw.right.value) < 1e-9:
                return Law("gamma", {"shape": num(shape), "scale": num(g.params["scale"])}, ""), 1.0, 0.0, \
                    "Gamma(a+1) * U^(1/a) boost = Gamma(a)"
    sg, lg = (core.left, core.right) if fname(core.left) == "sign" else (core.right, core.left)
    if fname(sg) == "sign" and fname(lg) == "log":
        ud = ctx.as_draw(sg.args[0])
        c, t = linear(lg.args[0])
        if ud is not None and ud.kind == "uniform" and sc(ud.params) and abs(ud.params["low"] + 0.5) < 1e-12 \
                and abs(ud.params["high"] - 0.5) < 1e-12 and abs(c - 1) < 1e-12 and len(t) == 1 \
                and abs(t[0][0] + 2) < 1e-12 and fname(t[0][1]) == "abs" and ctx.as_draw(t[0][1].args[0]) is ud:
            return Law("laplace", {"loc": 0.0, "scale": 1.0}, ""), -1.0, 0.0, \
                "sign(U) * log(1 - 2|U|), U ~ U(-1/2, 1/2) (Laplace inverse CDF)"
    return None


def core_law(core, ctx):
    """(base law, a0, b0, pattern) with core = a0 * X + b0, X ~ base law."""
    d = ctx.as_draw(core)
    if fname(core) == "sum" and fname(core.args[0]) == "log":
        dv = ctx.as_draw(core.args[0].args[0])
        if dv is not None and dv.kind == "uniform" and isnum(dv.size or C(None)) \
                and dv.params == {"low": 0.0, "high": 1.0}:
            return Law("gamma", {"shape": int(dv.size.value), "scale": 1.0}, ""), -1.0, 0.0, \
                "sum of log of k uniforms = -Gamma(k, 1)"
    if d is not None or isinstance(core, (ast.Subscript, ast.IfExp, ast.Compare)) \
            or fname(core) in ("max", "sum", "dot", "join", "ceil"):
        L = law(core, ctx)
        return L, 1.0, 0.0, L.pattern
    fn = fname(core)
    r = _elementary_core_law(core, fn, ctx)
    if r is not None:
        return r
    r = _power_core_law(core, ctx)
    if r is not None:
        return r
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Mult):
        r = _product_core_law(core, ctx)
        if r is not None:
            return r
    if isinstance(core, ast.BinOp) and isinstance(core.op, ast.Div):
        r = ratio_law(core, ctx)
        if r is not None:
            return r
    if fn == "norm_ppf":
        tn = truncnorm_ppf(core, ctx)
        if tn is not None:
            return tn
    if fn == "searchsorted" and isc(core.args[0]) and std_uniform(core.args[1], ctx):
        cut = np.asarray(core.args[0].value, dtype=float)
        pv = np.diff(np.concatenate([[0.0], cut]))
        return Law("empirical_discrete", {"values": list(range(len(pv))), "pvals": num(pv)}, ""), 1.0, 0.0, \
            "searchsorted(cumsum(p), U) (inverse-CDF categorical)"
    raise Unclassifiable(f"transformation not modelled: {show(core, ctx)[:160]}")


def angle_uniform(x, ctx):
    d = ctx.as_draw(x)
    if d is not None and d.kind == "uniform" and sc(d.params):
        return abs((d.params["high"] - d.params["low"]) - 2 * math.pi) < 1e-9
    c, t = linear(x)
    return len(t) == 1 and std_uniform(t[0][1], ctx) and abs(abs(t[0][0]) - 2 * math.pi) < 1e-9


def quarter_period_uniform(x, ctx):
    c, t = linear(x)
    return abs(c) < 1e-12 and len(t) == 1 and std_uniform(t[0][1], ctx) and abs(t[0][0] - math.pi / 2) < 1e-9


def truncnorm_ppf(core, ctx):
    """norm.ppf(lo_cdf + U * (hi_cdf - lo_cdf)) -> truncated standard normal on [ppf(lo_cdf), ppf(hi_cdf)]."""
    c, t = linear(core.args[0])
    if len(t) == 1 and std_uniform(t[0][1], ctx):
        lo_cdf, width = c, t[0][0]
        lo, hi = float(f"{_norm_ppf(lo_cdf):.10g}"), float(f"{_norm_ppf(lo_cdf + width):.10g}")  # ppf(cdf(x)) noise
        return Law("truncated_normal", {"loc": 0.0, "scale": 1.0, "low": lo, "high": hi}, ""), 1.0, 0.0, \
            "norm.ppf(F(a) + U (F(b) - F(a))) (truncated normal inverse CDF)"
    return None


def ratio_law(core, ctx):
    num_c, num_t = linear(core.left)
    den_c, den_t = linear(core.right)
    # Student t: Z / sqrt(V / df)
    if abs(num_c) < 1e-12 and len(num_t) == 1 and is_std_normal(ctx.as_draw(num_t[0][1])) \
            and fname(core.right) == "sqrt":
        vc, vt = linear(core.right.args[0])
        if abs(vc) < 1e-12 and len(vt) == 1:
            v = ctx.as_draw(vt[0][1])
            if v is not None and v.kind == "chi_squared" and sc(v.params) and abs(vt[0][0] * v.params["df"] - 1) < 1e-9:
                return Law("students_t", {"df": num(v.params["df"]), "loc": 0.0, "scale": 1.0}, ""), num_t[0][0], 0.0, \
                    "Z / sqrt(V/df), V ~ chi2(df)"
    if abs(num_c) < 1e-12 and abs(den_c) < 1e-12 and len(num_t) == 1 and len(den_t) == 1:
        x, y = ctx.as_draw(num_t[0][1]), ctx.as_draw(den_t[0][1])
        if x is not None and y is not None and x.kind == y.kind == "chi_squared" and sc(x.params) and sc(y.params):
            d1, d2 = x.params["df"], y.params["df"]
            k = (num_t[0][0] / den_t[0][0]) * (d1 / d2)
            return Law("f", {"dfnum": num(d1), "dfden": num(d2)}, ""), k, 0.0, "(chi2(d1)/d1) / (chi2(d2)/d2)"
    # Beta via gammas: X / (X + Y)
    if abs(num_c) < 1e-12 and len(num_t) == 1 and abs(den_c) < 1e-12 and len(den_t) == 2:
        x = ctx.as_draw(num_t[0][1])
        ds = [ctx.as_draw(tt) for _, tt in den_t]
        if x is not None and x in ds and all(abs(k - num_t[0][0]) < 1e-12 for k, _ in den_t):
            y = ds[1] if ds[0] is x else ds[0]
            if x.kind == y.kind == "gamma" and sc(x.params) and sc(y.params) and x.params["scale"] == y.params["scale"]:
                return Law("beta", {"a": num(x.params["shape"]), "b": num(y.params["shape"])}, ""), 1.0, 0.0, \
                    "X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b)"
    if isnum(core.left):
        c, t = linear(core.right)
        if abs(c) < 1e-12 and len(t) == 1 and isinstance(t[0][1], ast.BinOp) and isinstance(t[0][1].op, ast.Pow) \
                and std_uniform(t[0][1].left, ctx) and isnum(t[0][1].right) and t[0][1].right.value > 0:
            e = float(t[0][1].right.value)
            return Law("pareto", {"a": num(1.0 / e), "scale": 1.0}, ""), float(core.left.value) / t[0][0], 0.0, \
                "x_m / U^(1/a) (Pareto inverse CDF)"
    return None


def multi_term_law(c, terms, ctx):
    ds = [ctx.as_draw(t) for _, t in terms]
    # components of one vector draw
    if all(isinstance(t, ast.Subscript) and isnum(t.slice) for _, t in terms):
        bases = {id(ctx.as_draw(t.value)) for _, t in terms}
        if len(bases) == 1 and ctx.as_draw(terms[0][1].value) is not None:
            v = ctx.as_draw(terms[0][1].value)
            idx = [int(t.slice.value) for _, t in terms]
            coefs = [k for k, _ in terms]
            if v.kind == "multivariate_normal" and sc(v.params):
                mean, cov = np.asarray(v.params["mean"], float), np.asarray(v.params["cov"], float)
                w = np.zeros(len(mean))
                for i, k in zip(idx, coefs):
                    w[i] += k
                if abs(c) < 1e-12 and np.allclose(w, 1):
                    return Law("multivariate_normal", {"mean": num(mean), "cov": num(cov), "reduce": "sum"},
                               "sum of all multivariate normal coordinates")
                return Law("normal", {"loc": num(float(w @ mean) + c), "scale": num(math.sqrt(float(w @ cov @ w)))},
                           "linear combination of multivariate normal coordinates",
                           notes=[f"weights {num(w)} + {num(c)}; "
                                  "our multivariate_normal reduces only to a coordinate or the sum"],
                           extra={"mvn": {"mean": num(mean), "cov": num(cov), "weights": num(w), "offset": num(c)}})
            if v.kind == "negmult_counts" and abs(c) < 1e-12 and all(abs(k - 1) < 1e-12 for k in coefs):
                return negmult_law(v, idx, "sum of count components")
    if len(terms) == 2 and all(d is not None for d in ds) and ds[0] is not ds[1]:
        (k1, _), (k2, _) = terms
        a, b = ds
        if a.kind == b.kind == "poisson" and sc(a.params) and sc(b.params) and abs(k1 + k2) < 1e-12 \
                and abs(abs(k1) - 1) < 1e-12 and abs(c) < 1e-12:
            pos, neg = (a, b) if k1 > 0 else (b, a)
            return Law("skellam", {"mu1": num(pos.params["lam"]), "mu2": num(neg.params["lam"])},
                       "difference of two Poisson draws")
        if a.kind == b.kind == "exponential" and sc(a.params) and sc(b.params) and abs(k1 + k2) < 1e-12 \
                and a.params["scale"] == b.params["scale"]:
            return Law("laplace", {"loc": num(c), "scale": num(abs(k1) * a.params["scale"])},
                       "loc + (Exp - Exp) (Laplace as difference of exponentials)")
        if a.kind == b.kind == "normal" and sc(a.params) and sc(b.params):
            return Law("normal", {"loc": num(c + k1 * a.params["loc"] + k2 * b.params["loc"]),
                                  "scale": num(math.hypot(k1 * a.params["scale"], k2 * b.params["scale"]))},
                       "linear combination of independent normals")
    raise Unclassifiable("sum of several random terms not modelled: "
                         + " + ".join(f"{num(k)}*{show(t, ctx)}" for k, t in terms)[:200])


def affine_law(L: Law, a: float, b: float, pattern: str) -> Law:
    """Law of a*X + b for X ~ L."""
    fam, p = L.family, dict(L.params)
    notes, extra = list(L.notes), dict(L.extra)
    if abs(a - 1) < 1e-12 and abs(b) < 1e-12:
        return Law(fam, {k: num(v) for k, v in p.items()}, pattern or L.pattern, notes, extra)
    if pattern and pattern.startswith("direct "):
        pattern += " then affine a*X + b"
    if abs(a) < 1e-15:
        raise Unclassifiable("degenerate affine transform")
    out = None
    if fam in ("normal", "logistic", "laplace") or (fam == "students_t"):
        out = dict(p)
        out["loc"] = a * p["loc"] + b
        out["scale"] = abs(a) * p["scale"]
    elif fam == "gumbel" and a > 0:
        out = {"loc": a * p["loc"] + b, "scale": a * p["scale"]}
    elif fam in ("uniform", "arcsine"):
        lo, hi = sorted((a * p["low"] + b, a * p["high"] + b))
        out = {"low": lo, "high": hi}
    elif fam == "triangular":
        lo, hi = sorted((a * p["left"] + b, a * p["right"] + b))
        out = {"left": lo, "mode": a * p["mode"] + b, "right": hi}
    elif fam == "truncated_normal":
        lo, hi = sorted((a * p["low"] + b, a * p["high"] + b))
        out = {"loc": a * p["loc"] + b, "scale": abs(a) * p["scale"], "low": lo, "high": hi}
    elif fam == "frechet" and a > 0:
        out = {"c": p["c"], "scale": a * p["scale"], "loc": a * p["loc"] + b}
    elif a > 0 and abs(b) < 1e-15:
        if fam in ("exponential", "rayleigh"):
            out = {"scale": a * p["scale"]}
        elif fam == "gamma":
            out = {"shape": p["shape"], "scale": a * p["scale"]}
        elif fam == "erlang":
            out = {"k": p["k"], "scale": a * p["scale"]}
        elif fam == "weibull":
            out = {"a": p["a"], "scale": a * p["scale"]}
        elif fam == "pareto":
            out = {"a": p["a"], "scale": a * p["scale"]}
        elif fam == "log_normal":
            out = {"mean": p["mean"] + math.log(a), "sigma": p["sigma"]}
        elif fam == "reciprocal":
            out = {"a": a * p["a"], "b": a * p["b"]}
        elif fam == "chi_squared":
            fam, out = "gamma", {"shape": p["df"] / 2.0, "scale": 2.0 * a}
        elif fam == "students_t":
            out = {"df": p["df"], "loc": 0.0, "scale": a}
        elif fam == "f":
            raise Unclassifiable(f"scaled F ({a:.6g} * F)")
    elif fam == "empirical_discrete":
        ints = float(a).is_integer() and float(b).is_integer() and all(float(v).is_integer() for v in p["values"])
        out = {"values": [int(a * v + b) if ints else a * v + b for v in p["values"]], "pvals": p["pvals"]}
    elif fam == "geometric" and abs(a - 1) < 1e-12 and abs(b + 1) < 1e-12:
        fam, out = "negative_binomial", {"n": 1, "p": p["p"]}
        notes.append("geometric - 1: number of failures before the first success (support 0, 1, ...)")
        pattern = (pattern + "; " if pattern else "") + "geometric shifted to start at 0"
    elif fam == "poisson" and abs(a - 1) < 1e-12 and float(b).is_integer():
        raise Unclassifiable(f"Poisson shifted by {b}")
    if out is None:
        raise Unclassifiable(f"affine transform {a:.6g}*X + {b:.6g} of {fam} not expressible")
    return Law(fam, {k: num(v) for k, v in out.items()}, pattern or L.pattern, notes, extra)
