"""Symbolic execution of statements (assignments, loops, ifs) and the recognisers of loop samplers
(Knuth, cumulative, counters, negative-multinomial while loops)."""
from __future__ import annotations

import ast
import math

import numpy as np

from .symbolic import C, isc, isnum, unk
from .samplers import is_const_val, path_of, val
from .folding import _norm_cdf, fold


def names_in(node):
    return {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}


def assign(tgt, v, env, ctx):
    if isinstance(tgt, ast.Name):
        env[tgt.id] = v
    elif isinstance(tgt, (ast.Tuple, ast.List)):
        n = len(tgt.elts)
        if isc(v) and isinstance(v.value, (list, tuple, np.ndarray)) and len(v.value) == n:
            for e, x in zip(tgt.elts, v.value):
                assign(e, C(x), env, ctx)
        elif isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) == n:
            for e, x in zip(tgt.elts, v.elts):
                assign(e, x, env, ctx)
        else:
            for e in tgt.elts:
                assign(e, unk(v), env, ctx)
    elif isinstance(tgt, ast.Subscript):
        base = tgt.value
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            env[base.id] = unk(tgt)


def exec_block(stmts, env, ctx):
    for s in stmts:
        exec_stmt(s, env, ctx)


def _exec_expr(s, env, ctx) -> None:
    """An expression statement: ``xs.append(v)`` records the printed candidate, other list mutations make the list
    unknown, ``shuffle(xs)`` makes it a shuffle draw."""
    call = s.value
    if isinstance(call, ast.Call):
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "append" and isinstance(f.value, ast.Name) and call.args:
            ctx.appends[f.value.id] = fold(call.args[0], env, ctx)
            if f.value.id in env:  # the list is mutated: its folded value is no longer known
                env[f.value.id] = unk(call)
            return
        if isinstance(f, ast.Attribute) and f.attr in ("extend", "insert", "pop", "remove", "sort", "reverse") \
                and isinstance(f.value, ast.Name):
            env[f.value.id] = unk(call)
            return
        p = path_of(f, env, ctx)
        if p in ("random.shuffle", "numpy.random.shuffle", "Generator.shuffle") and call.args \
                and isinstance(call.args[0], ast.Name):
            name = call.args[0].id
            items = env.get(name, unk(call.args[0]))
            env[name] = ctx.draw("shuffle", {"items": val(items)}, None, p, ast.unparse(call))
            return


def _exec_if(s, env, ctx) -> None:
    """An ``if``: the taken branch where the test folds to a constant, else both branches, their names and appends
    merged into conditional expressions."""
    test = fold(s.test, env, ctx)
    if isc(test):
        exec_block(s.body if test.value else s.orelse, env, ctx)
        return
    saved = dict(ctx.appends)
    e1, e2 = dict(env), dict(env)
    exec_block(s.body, e1, ctx)
    a1 = ctx.appends
    ctx.appends = dict(saved)
    exec_block(s.orelse, e2, ctx)
    a2 = ctx.appends
    for k in set(e1) | set(e2):
        v1, v2 = e1.get(k, env.get(k)), e2.get(k, env.get(k))
        if v1 is v2:
            env[k] = v1
        else:
            env[k] = ast.IfExp(test=test, body=v1 if v1 is not None else unk(s),
                               orelse=v2 if v2 is not None else unk(s))
    merged = {}
    for k in set(a1) | set(a2):
        v1, v2 = a1.get(k, saved.get(k)), a2.get(k, saved.get(k))
        merged[k] = v1 if v1 is v2 else ast.IfExp(test=test, body=v1 if v1 is not None else unk(s),
                                                   orelse=v2 if v2 is not None else unk(s))
    ctx.appends = merged


def exec_stmt(s, env, ctx):
    """Execute one statement symbolically: ``env`` maps names to folded values, ``ctx`` collects appends and draws."""
    if isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Assert, ast.Raise, ast.Break, ast.Continue)):
        return
    if isinstance(s, (ast.FunctionDef, ast.ClassDef)):
        ctx.has_defs = True
        return
    if isinstance(s, ast.Assign):
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and s.targets[0].id in ctx.override:
            name = s.targets[0].id
            call = s.value
            pkw = [k.value for k in call.keywords if k.arg == "p"]
            ctx.selector_weights = val(fold(pkw[0], env, ctx)) if pkw else None
            env[name] = C(ctx.override[name])
            return
        v = fold(s.value, env, ctx)
        for tgt in s.targets:
            assign(tgt, v, env, ctx)
        return
    if isinstance(s, ast.AnnAssign) and s.value is not None:
        assign(s.target, fold(s.value, env, ctx), env, ctx)
        return
    if isinstance(s, ast.AugAssign):
        if isinstance(s.target, ast.Name):
            env[s.target.id] = fold(ast.BinOp(left=ast.Name(id=s.target.id, ctx=ast.Load()), op=s.op, right=s.value),
                                    env, ctx)
        else:
            assign(s.target, None, env, ctx)
        return
    if isinstance(s, ast.Expr):
        _exec_expr(s, env, ctx)
        return
    if isinstance(s, ast.If):
        _exec_if(s, env, ctx)
        return
    if isinstance(s, ast.While):
        if recognize_negmult_while(s, env, ctx) or recognize_knuth_while(s, env, ctx):
            return
        mark_unknown(s, env, ctx, "while-loop not recognised")
        return
    if isinstance(s, ast.For):
        if recognize_cumulative_for(s, env, ctx) or recognize_counter_for(s, env, ctx):
            return
        mark_unknown(s, env, ctx, "inner for-loop not recognised")
        return
    # anything else: mark names it assigns as unknown
    mark_unknown(s, env, ctx, f"statement {type(s).__name__} not modelled")


def mark_unknown(s, env, ctx, why):
    ctx.notes.append(why)
    for x in ast.walk(s):
        if isinstance(x, (ast.Assign, ast.AugAssign)):
            for tgt in (x.targets if isinstance(x, ast.Assign) else [x.target]):
                for nm in ast.walk(tgt):
                    if isinstance(nm, ast.Name):
                        env[nm.id] = unk(s)
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "append" \
                and isinstance(x.func.value, ast.Name):
            ctx.appends[x.func.value.id] = unk(s)
            env[x.func.value.id] = unk(s)


def _choice_in(stmts, env, ctx):
    """The (name, call) of an `outcome = <...>.choice(K or list, p=probs)` statement in a block."""
    for st in ast.walk(ast.Module(body=stmts, type_ignores=[])):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                and isinstance(st.value, ast.Call):
            p = path_of(st.value.func, env, ctx) or ""
            if p.endswith(".choice"):
                return st.targets[0].id, st.value
    return None, None


def recognize_negmult_while(s, env, ctx) -> bool:
    """while failures < x0: outcome = choice(K, p); if outcome == stop: failures += 1 [else] counts[idx] += 1."""
    t = s.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Lt)
            and isinstance(t.left, ast.Name)):
        return False
    fail = t.left.id
    x0 = fold(t.comparators[0], env, ctx)
    if not isnum(x0):
        return False
    oname, call = _choice_in(s.body, env, ctx)
    if oname is None:
        return False
    a = fold(call.args[0], env, ctx) if call.args else None
    pk = [k.value for k in call.keywords if k.arg == "p"]
    if a is None or not pk:
        return False
    pv = fold(pk[0], env, ctx)
    if not (isc(a) and isc(pv)):
        return False
    values = list(range(int(a.value))) if isinstance(a.value, (int, np.integer)) else list(np.asarray(a.value).tolist())
    probs = [float(x) for x in np.asarray(pv.value, dtype=float)]
    stop = None
    count_map: dict[int, int] = {}
    counts_name = None

    def scan(stmts, cond):  # cond: None (always) / ('eq', v) / ('ne', v)
        nonlocal stop, counts_name
        for st in stmts:
            if isinstance(st, ast.If) and isinstance(st.test, ast.Compare) and isinstance(st.test.left, ast.Name) \
                    and st.test.left.id == oname and isinstance(st.test.ops[0], ast.Eq):
                v = fold(st.test.comparators[0], env, ctx)
                scan(st.body, ("eq", v.value))
                scan(st.orelse, ("ne", v.value))
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and st.target.id == fail:
                if cond and cond[0] == "eq":
                    stop = cond[1]
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Subscript) \
                    and isinstance(st.target.value, ast.Name):
                counts_name = st.target.value.id
                for o in values:
                    if cond and ((cond[0] == "eq" and o != cond[1]) or (cond[0] == "ne" and o == cond[1])):
                        continue
                    e2 = dict(env)
                    e2[oname] = C(o)
                    idx = fold(st.target.slice, e2, ctx)
                    if isnum(idx):
                        count_map[int(o)] = int(idx.value)
    scan(s.body, None)
    if stop is None or counts_name is None:
        return False
    p_stop = probs[values.index(stop)]
    env[counts_name] = ctx.draw("negmult_counts", {"n": x0.value, "values": values, "probs": probs, "stop": stop,
                                                    "count_index": count_map}, None, "while-loop",
                                "negative-multinomial trial loop")
    env[fail] = C(x0.value)
    env[oname] = unk(s)
    ctx.notes.append(f"while-loop = negative multinomial trials (stop outcome {stop}, p_stop={p_stop})")
    return True


def recognize_knuth_while(s, env, ctx) -> bool:
    """while product > threshold: product *= U; count += 1   (Knuth's Poisson sampler)."""
    t = s.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Gt)
            and isinstance(t.left, ast.Name)):
        return False
    prod_name = t.left.id
    thr = fold(t.comparators[0], env, ctx)
    if not isnum(thr):
        return False
    count_name = None
    mult_ok = False
    for st in s.body:
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            if st.target.id == prod_name and isinstance(st.op, ast.Mult):
                d = ctx.as_draw(fold(st.value, env, ctx))
                mult_ok = d is not None and d.kind == "uniform" and d.params == {"low": 0.0, "high": 1.0}
            elif isinstance(st.op, ast.Add) and isnum(fold(st.value, env, ctx)) and fold(st.value, env, ctx).value == 1:
                count_name = st.target.id
    if not (mult_ok and count_name):
        return False
    c0, p0 = env.get(count_name), env.get(prod_name)
    if not (isnum(c0) and isnum(p0) and p0.value == 1):
        return False
    lam = -math.log(thr.value)
    d = ctx.draw("poisson", {"lam": lam}, None, "while-loop", "Knuth product-of-uniforms loop")
    env[count_name] = ast.BinOp(left=d, op=ast.Add(), right=C(c0.value + 1))
    env[prod_name] = unk(s)
    ctx.notes.append(f"while-loop = Knuth Poisson sampler, lam = -log({thr.value:.6g})")
    return True


def recognize_cumulative_for(s, env, ctx) -> bool:
    """for i, p in enumerate(probs): cum += p; if u < cum: out.append(i); break  else: out.append(K)."""
    it = s.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate"):
        return False
    probs = fold(it.args[0], env, ctx)
    if not isc(probs) or not isinstance(s.target, ast.Tuple):
        return False
    idx_name = s.target.elts[0].id
    out_name, u_draw = None, None
    for st in ast.walk(ast.Module(body=s.body, type_ignores=[])):
        if isinstance(st, ast.If) and isinstance(st.test, ast.Compare):
            u_draw = ctx.as_draw(fold(st.test.left, env, ctx))
            for b in st.body:
                if isinstance(b, ast.Expr) and isinstance(b.value, ast.Call) \
                        and isinstance(b.value.func, ast.Attribute) \
                        and b.value.func.attr == "append" and isinstance(b.value.args[0], ast.Name) \
                        and b.value.args[0].id == idx_name:
                    out_name = b.value.func.value.id
    if out_name is None or u_draw is None or u_draw.kind != "uniform":
        return False
    pv = [float(x) for x in np.asarray(probs.value, dtype=float)]
    values = list(range(len(pv)))
    if s.orelse:
        last = fold(s.orelse[0].value.args[0], env, ctx) if isinstance(s.orelse[0], ast.Expr) else None
        if isnum(last):
            values.append(int(last.value))
            pv.append(1.0 - sum(pv))
    ctx.appends[out_name] = ctx.draw("choice", {"values": values, "pvals": pv, "replace": True}, None, "for-loop",
                                     "inverse-CDF scan over cumulative probabilities")
    ctx.notes.append("for-loop = inverse-CDF categorical scan")
    return True


def recognize_counter_for(s, env, ctx) -> bool:
    """for _ in range(m): if U > c: counter += 1   ->  counter + Binomial(m, P(U > c))."""
    it = fold(s.iter, env, ctx)
    if not (isc(it) and isinstance(it.value, list)) or len(s.body) != 1 or not isinstance(s.body[0], ast.If):
        return False
    st = s.body[0]
    if st.orelse or len(st.body) != 1 or not isinstance(st.body[0], ast.AugAssign):
        return False
    tgt = st.body[0].target
    if not isinstance(tgt, ast.Name) or not isnum(env.get(tgt.id, C(None))):
        return False
    test = fold(st.test, env, ctx)
    p = bernoulli_prob(test, ctx)
    if p is None:
        return False
    d = ctx.draw("binomial", {"n": len(it.value), "p": p}, None, "for-loop", "count of successes in a for-loop")
    env[tgt.id] = ast.BinOp(left=C(env[tgt.id].value), op=ast.Add(), right=d)
    ctx.notes.append("for-loop = binomial count")
    return True


def bernoulli_prob(test, ctx):
    """P(test) for a comparison of a U(a, b) draw with a constant."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right, op = test.left, test.comparators[0], test.ops[0]
    d = ctx.as_draw(left)
    c = right
    if d is None:
        d, c = ctx.as_draw(right), left
        op = {ast.Lt: ast.Gt(), ast.LtE: ast.GtE(), ast.Gt: ast.Lt(), ast.GtE: ast.LtE()}.get(type(op))
    if d is None or op is None or not isnum(c):
        return None
    cdf = scalar_cdf(d)
    if cdf is None:
        return None
    q = cdf(float(c.value))
    return q if isinstance(op, (ast.Lt, ast.LtE)) else 1.0 - q


def scalar_cdf(d):
    if not all(is_const_val(v) for v in d.params.values()):
        return None
    if d.kind == "uniform":
        lo, hi = d.params["low"], d.params["high"]
        return lambda x: min(1.0, max(0.0, (x - lo) / (hi - lo)))
    if d.kind == "normal":
        return lambda x: _norm_cdf(x, d.params["loc"], d.params["scale"])
    return None
