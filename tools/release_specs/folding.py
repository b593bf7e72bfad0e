"""Constant folding of expressions: literals, pure numpy/math functions, draws and vector algebra."""
from __future__ import annotations

import ast
import math
import operator

import numpy as np

from .symbolic import C, F, fname, isc, isnum, RNGObj, unk
from .samplers import CONSTS, is_const_val, make_draw, path_of, RNG_CTORS, sampler_of


BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
       ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.MatMult: operator.matmul}
CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
       ast.NotEq: operator.ne}


def _norm_cdf(x, loc=0.0, scale=1.0):
    return 0.5 * (1.0 + math.erf((x - loc) / (scale * math.sqrt(2.0))))


def _norm_ppf(q, loc=0.0, scale=1.0):
    from scipy.stats import norm  # pure function, used for constant folding only
    return float(norm.ppf(q, loc, scale))


PURE = {
    "numpy.array": lambda x, dtype=None, **k: np.array(x, dtype=dtype),
    "numpy.asarray": lambda x, dtype=None, **k: np.asarray(x, dtype=dtype),
    "numpy.log": np.log, "numpy.exp": np.exp, "numpy.sqrt": np.sqrt, "numpy.sin": np.sin, "numpy.cos": np.cos,
    "numpy.append": np.append, "numpy.concatenate": lambda seq, **k: np.concatenate(seq),
    "numpy.arange": np.arange, "numpy.zeros": lambda *a, **k: np.zeros(*a, **k), "numpy.ones": np.ones,
    "numpy.cumsum": np.cumsum, "numpy.sum": np.sum, "numpy.prod": np.prod, "numpy.linalg.cholesky": np.linalg.cholesky,
    "numpy.isclose": np.isclose, "numpy.all": np.all, "numpy.any": np.any, "numpy.abs": np.abs, "numpy.ceil": np.ceil,
    "numpy.dot": np.dot, "numpy.zeros_like": np.zeros_like,
    "math.exp": math.exp, "math.log": math.log, "math.sqrt": math.sqrt, "math.ceil": math.ceil,
    "scipy.stats.norm.cdf": lambda x, loc=0.0, scale=1.0: _norm_cdf(x, loc, scale),
    "scipy.stats.norm.ppf": _norm_ppf,
    "builtins.len": len, "builtins.float": float, "builtins.int": int, "builtins.sum": sum, "builtins.max": max,
    "builtins.min": min, "builtins.abs": abs, "builtins.list": list, "builtins.range": lambda *a: list(range(*a)),
    "builtins.round": round, "builtins.tuple": tuple, "builtins.sorted": sorted, "builtins.str": str,
}
SYMFUN = {
    "numpy.log": "log", "math.log": "log", "numpy.exp": "exp", "math.exp": "exp", "numpy.sqrt": "sqrt",
    "math.sqrt": "sqrt", "numpy.sin": "sin", "math.sin": "sin", "numpy.cos": "cos", "math.cos": "cos",
    "numpy.sum": "sum", "builtins.sum": "sum", "numpy.prod": "prod", "numpy.abs": "abs", "builtins.abs": "abs",
    "numpy.sign": "sign", "numpy.ceil": "ceil", "math.ceil": "ceil", "builtins.max": "max", "numpy.maximum": "max",
    "builtins.min": "min", "builtins.float": "float", "builtins.int": "int", "numpy.searchsorted": "searchsorted",
    "numpy.dot": "dot", "scipy.stats.norm.ppf": "norm_ppf", "scipy.stats.norm.cdf": "norm_cdf",
    "numpy.floor": "floor", "builtins.len": "len",
}
SAFE_METHODS = {"sum", "prod", "copy", "tolist", "astype", "mean", "cumsum", "item", "join", "keys", "values"}


def _fold_operation(n, t, env, ctx):
    """Fold an operator node (binary, unary, boolean, comparison): a constant where every operand is one."""
    if t is ast.BinOp:
        left, right = fold(n.left, env, ctx), fold(n.right, env, ctx)
        if isc(left) and isc(right):
            try:
                return C(BIN[type(n.op)](left.value, right.value))
            except Exception:  # noqa: BLE001
                pass
        v = vector_algebra(n.op, left, right, ctx)
        if v is not None:
            return v
        return ast.BinOp(left=left, op=n.op, right=right)
    if t is ast.UnaryOp:
        o = fold(n.operand, env, ctx)
        if isc(o):
            try:
                return C({ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}[type(n.op)](o.value))
            except Exception:  # noqa: BLE001
                pass
        return ast.UnaryOp(op=n.op, operand=o)
    if t is ast.BoolOp:
        vals = [fold(v, env, ctx) for v in n.values]
        if all(isc(v) for v in vals):
            if isinstance(n.op, ast.And):
                return C(all(v.value for v in vals))
            return C(any(v.value for v in vals))
        return ast.BoolOp(op=n.op, values=vals)
    if t is ast.Compare:
        left = fold(n.left, env, ctx)
        comps = [fold(c, env, ctx) for c in n.comparators]
        if isc(left) and all(isc(c) for c in comps):
            try:
                ok, cur = True, left.value
                for op, c in zip(n.ops, comps):
                    ok = ok and bool(CMP[type(op)](cur, c.value))
                    cur = c.value
                return C(ok)
            except Exception:  # noqa: BLE001
                pass
        return ast.Compare(left=left, ops=n.ops, comparators=comps)
    raise TypeError(t)


def _fold_container(n, t, env, ctx):
    """Fold a list, tuple, dict, subscript or slice: a constant where every part is one; ``draw(size=1)[0]`` is
    the scalar draw."""
    if t in (ast.List, ast.Tuple):
        elts = [fold(e, env, ctx) for e in n.elts]
        if all(isc(e) for e in elts):
            vals = [e.value for e in elts]
            return C(vals if t is ast.List else tuple(vals))
        return (ast.List if t is ast.List else ast.Tuple)(elts=elts, ctx=ast.Load())
    if t is ast.Dict:
        keys = [fold(k, env, ctx) if k is not None else None for k in n.keys]
        vals = [fold(v, env, ctx) for v in n.values]
        if all(k is not None and isc(k) for k in keys) and all(isc(v) for v in vals):
            return C({k.value: v.value for k, v in zip(keys, vals)})
        return ast.Dict(keys=keys, values=vals)
    if t is ast.Subscript:
        v = fold(n.value, env, ctx)
        s = fold(n.slice, env, ctx)
        dv = ctx.as_draw(v)
        if dv is not None and isnum(dv.size or C(None)) and dv.size.value == 1 and isc(s) and s.value == 0:
            return ctx.draw(dv.kind, dv.params, None, dv.api, dv.text + "[0]")
        if isc(v) and isc(s):
            try:
                return C(v.value[s.value])
            except Exception:  # noqa: BLE001
                pass
        return ast.Subscript(value=v, slice=s, ctx=ast.Load())
    if t is ast.Slice:
        parts = [fold(x, env, ctx) if x is not None else C(None) for x in (n.lower, n.upper, n.step)]
        if all(isc(x) for x in parts):
            return C(slice(*[x.value for x in parts]))
        return unk(n)
    raise TypeError(t)


_OPERATIONS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)
_CONTAINERS = (ast.List, ast.Tuple, ast.Dict, ast.Subscript, ast.Slice)


def fold(n, env, ctx):
    """The folded form of expression ``n``: a constant, a draw, or an expression over unknowns."""
    t = type(n)
    if t is ast.Constant:
        return n
    if t is ast.Name:
        if n.id in env:
            return env[n.id]
        if n.id in ("float", "int", "bool", "str"):
            return C({"float": float, "int": int, "bool": bool, "str": str}[n.id])
        return unk(n)
    if t is ast.Attribute:
        p = path_of(n, env, ctx)
        if p in CONSTS:
            return C(CONSTS[p])
        base = fold(n.value, env, ctx)
        if isc(base) and isinstance(base.value, np.ndarray) and n.attr in ("T", "size", "shape"):
            return C(getattr(base.value, n.attr))
        return unk(n)
    if t in _OPERATIONS:
        return _fold_operation(n, t, env, ctx)
    if t is ast.IfExp:
        test = fold(n.test, env, ctx)
        if isc(test):
            return fold(n.body if test.value else n.orelse, env, ctx)
        return ast.IfExp(test=test, body=fold(n.body, env, ctx), orelse=fold(n.orelse, env, ctx))
    if t in _CONTAINERS:
        return _fold_container(n, t, env, ctx)
    if t is ast.Call:
        return fold_call(n, env, ctx)
    return unk(n)


def fold_call(n, env, ctx):
    p = path_of(n.func, env, ctx)
    args = []
    for a in n.args:
        if isinstance(a, ast.Starred):
            v = fold(a.value, env, ctx)
            if isc(v) and isinstance(v.value, (list, tuple)):
                args.extend(C(x) for x in v.value)
            else:
                return unk(n)
        else:
            args.append(fold(a, env, ctx))
    kws = {k.arg: fold(k.value, env, ctx) for k in n.keywords if k.arg}
    if p:
        if p in RNG_CTORS:
            return C(RNGObj())
        s = sampler_of(p)
        if s:
            lib, name, frozen = s
            if frozen:  # scipy.stats.X(...).rvs(...)
                fc = n.func.value
                fargs = [fold(a, env, ctx) for a in fc.args]
                fkws = {k.arg: fold(k.value, env, ctx) for k in fc.keywords if k.arg}
                rkws = dict(fkws)
                rkws.update(kws)
                if args:
                    rkws["size"] = args[0]
                args, kws = fargs, rkws
            if lib == "random" and name == "shuffle":
                return unk(n)  # handled as a statement
            return make_draw(lib, name, args, kws, ctx, api=p, text=ast.unparse(n))
        if p in PURE and all(isc(a) for a in args) and all(isc(v) for v in kws.values()):
            try:
                return C(PURE[p](*[a.value for a in args], **{k: v.value for k, v in kws.items()}))
            except Exception:  # noqa: BLE001
                pass
        sym = SYMFUN.get(p)
        if sym:
            if sym in ("float", "int") and len(args) == 1:
                return args[0]
            return F(sym, *args)
        return unk(n)
    if isinstance(n.func, ast.Attribute):
        recv = fold(n.func.value, env, ctx)
        m = n.func.attr
        if isc(recv) and all(isc(a) for a in args) and all(isc(v) for v in kws.values()) and m in SAFE_METHODS:
            try:
                return C(getattr(recv.value, m)(*[a.value for a in args], **{k: v.value for k, v in kws.items()}))
            except Exception:  # noqa: BLE001
                pass
        if m in ("copy", "tolist", "item", "astype"):
            return recv
        if m in ("sum", "prod", "mean"):
            return F(m, recv)
        if m == "join" and isc(recv):
            return F("join", recv, *args)
    return unk(n)


def is_std_normal(d):
    return d is not None and d.kind == "normal" and d.params.get("loc") == 0 and d.params.get("scale") == 1


def vector_algebra(op, left, right, ctx):
    """Fold-time constructions on vector draws: L @ z, mu + mvn, mvn * sqrt(nu/chi2), gamma_vec / sum(gamma_vec)."""
    dl, dr = ctx.as_draw(left), ctx.as_draw(right)
    if isinstance(op, ast.MatMult) and isc(left) and is_std_normal(dr) and isnum(dr.size or C(None)):
        L = np.asarray(left.value, dtype=float)
        return ctx.draw("multivariate_normal", {"mean": np.zeros(L.shape[0]), "cov": L @ L.T}, None,
                        "derived", "L @ standard_normal(k) with L = cholesky(S)")
    if isinstance(op, ast.Add):
        for c, d in ((left, dr), (right, dl)):
            if isc(c) and d is not None and d.kind in ("multivariate_normal", "multivariate_t") \
                    and isinstance(c.value, (list, tuple, np.ndarray)) and np.ndim(c.value) == 1:
                key = "mean" if d.kind == "multivariate_normal" else "loc"
                if not is_const_val(d.params[key]):
                    return None
                params = dict(d.params)
                params[key] = np.asarray(d.params[key], dtype=float) + np.asarray(c.value, dtype=float)
                return ctx.draw(d.kind, params, d.size, "derived", f"vector shift of {d.kind}#{d.id}")
    if isinstance(op, ast.Mult):
        for v, s in ((dl, right), (dr, left)):
            if v is not None and v.kind == "multivariate_normal" and fname(s) == "sqrt" \
                    and is_const_val(v.params["mean"]) and np.allclose(np.asarray(v.params["mean"], dtype=float), 0):
                inner = s.args[0]
                if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div) and isnum(inner.left):
                    chi = ctx.as_draw(inner.right)
                    if chi is not None and chi.kind == "chi_squared" and is_const_val(chi.params["df"]) \
                            and abs(chi.params["df"] - inner.left.value) < 1e-12:
                        return ctx.draw("multivariate_t", {"loc": v.params["mean"], "shape": v.params["cov"],
                                                           "df": chi.params["df"]}, v.size, "derived",
                                        "mvn(0, S) * sqrt(nu / chi2(nu))")
    if isinstance(op, ast.Div) and dl is not None and dl.kind == "gamma" and fname(right) == "sum" \
            and ctx.as_draw(right.args[0]) is dl:
        shape = dl.params["shape"]
        if is_const_val(shape) and np.ndim(shape) == 1 and is_const_val(dl.params["scale"]):
            return ctx.draw("dirichlet", {"alpha": np.asarray(shape, dtype=float)}, None, "derived",
                            "gamma(alpha_i) / sum")
    return None
