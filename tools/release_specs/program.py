"""One program: find its sampling loop and output, execute it symbolically, classify it, list its sampler calls."""
from __future__ import annotations

import ast
import json

import numpy as np

from .symbolic import C, Ctx, isc, RNGObj, show, Unclassifiable
from .samplers import import_aliases, num, path_of, RNG_CTORS, sampler_of, sc
from .folding import fold
from .statements import exec_block, names_in
from .laws import choice_law, Law, law
from .equivalences import tidy_params


def find_main_loop(tree):
    for i, s in enumerate(tree.body):
        if isinstance(s, ast.For) and isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Name) \
                and s.iter.func.id == "range" and s.iter.args and isinstance(s.iter.args[0], ast.Constant):
            return i, s
    return None, None


def printed_list(post, appends, ctx, env):
    """Name of the list the program prints (and a note when the print is not the plain list)."""
    for s in reversed(post):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) \
                and s.value.func.id == "print" and s.value.args:
            a = s.value.args[0]
            if isinstance(a, ast.Name):
                if a.id in appends:
                    return a.id, None
                for s2 in post:  # derived list, e.g. a flattening comprehension
                    if isinstance(s2, ast.Assign) and any(isinstance(t, ast.Name) and t.id == a.id for t in s2.targets):
                        srcs = names_in(s2.value) & set(appends)
                        if srcs:
                            return srcs.pop(), f"prints {a.id} = {ast.unparse(s2.value)}"
            if isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name):
                inner = a.value.id
                for s2 in post:
                    if isinstance(s2, ast.Assign) and any(isinstance(t, ast.Name) and t.id == inner
                                                          for t in s2.targets):
                        srcs = names_in(s2.value) & set(appends)
                        if srcs:
                            return srcs.pop(), f"prints {ast.unparse(a)} with {inner} = {ast.unparse(s2.value)}"
                if inner in appends:
                    return inner, f"prints {ast.unparse(a)}"
    if len(appends) == 1:
        return next(iter(appends)), "no plain print found"
    return None, "printed list not found"


def find_selector(body, env, ctx):
    """A mixture / outcome selector `k = choice([0..m-1] or m, p=w)` whose value is used in an index or a test."""
    for idx, s in enumerate(body):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, ast.Call):
            p = path_of(s.value.func, env, ctx) or ""
            if not p.endswith(".choice") or not any(k.arg == "p" for k in s.value.keywords) or not s.value.args:
                continue
            tmp = Ctx(ctx.aliases)
            a = fold(s.value.args[0], env, tmp)
            if not isc(a):
                continue
            if isinstance(a.value, (int, np.integer)):
                vals = list(range(int(a.value)))
            else:
                vals = list(np.asarray(a.value).tolist())
            if vals != list(range(len(vals))):
                continue
            name = s.targets[0].id
            used = False
            for later in body[idx + 1:]:
                for x in ast.walk(later):
                    if isinstance(x, ast.Subscript) and name in names_in(x.slice):
                        used = True
                    if isinstance(x, (ast.If, ast.IfExp, ast.While)) and name in names_in(x.test):
                        used = True
            if used:
                return name, len(vals)
    return None, 0


def module_constants(pre, env, result) -> None:
    """The literal module-level assignments (``literals``) and, separately, the names whose value folded from
    literals (``derived_constants``, with their expression); empty accumulators are left out."""
    for s in pre:
        if isinstance(s, ast.Assign):
            for tgt in s.targets:
                if isinstance(tgt, ast.Name):
                    try:
                        lit = ast.literal_eval(s.value)
                        if lit == [] or lit == {}:
                            continue  # output accumulators
                        result["literals"][tgt.id] = num(lit)
                    except Exception:  # noqa: BLE001
                        v = env.get(tgt.id)
                        if v is not None and isc(v) and not isinstance(v.value, RNGObj):
                            try:
                                json.dumps(num(v.value))
                                result["derived_constants"][tgt.id] = {"value": num(v.value),
                                                                       "expr": ast.unparse(s.value)}
                            except TypeError:
                                pass


def selector_law(loop, post, env, aliases, sel, m, result) -> Law:
    """The law of a loop whose body branches on an index draw ``sel`` over ``m`` values: the body is specialised
    per index; a mixture of the branches' laws, or a choice where every branch prints a constant."""
    comps = []
    for i in range(m):
        ctx = Ctx(aliases)
        ctx.override = {sel: i}
        e = dict(env)
        exec_block(loop.body, e, ctx)
        name, pnote = printed_list(post, ctx.appends, ctx, e)
        if name is None:
            raise Unclassifiable(pnote)
        L = law(ctx.appends[name], ctx)
        w = ctx.selector_weights
        comps.append((L, None if w is None else float(np.asarray(w, dtype=float)[i]), ctx))
        if pnote:
            result["notes"].append(pnote)
    result["notes"].append(f"selector `{sel}` = choice over {m} indices; body specialised per index")
    if all(L.family == "constant" for L, _, _ in comps):
        values = [L.params["value"] for L, _, _ in comps]
        L = choice_law(values, [w for _, w, _ in comps], "outcome = choice(K, p) printed directly")
        L.notes.append("the selector draw is itself the printed outcome")
    else:
        comp_specs = []
        for Lc, w, _ in comps:
            comp_specs.append({"family": Lc.family, "params": tidy_params(Lc.family, Lc.params),
                               "weight": num(w)})
        pats = [Lc.pattern for Lc, _, _ in comps]
        L = Law("mixture", {"components": comp_specs}, "mixture: index = choice(K, p=weights); "
                + " | ".join(sorted(set(pats))), extra={"component_patterns": pats})
    result["notes"].extend(n for _, _, c in comps for n in c.notes)
    return L


def single_law(loop, post, env, aliases, ctx0, result) -> Law:
    """The law of a loop with no index selector: the printed list's element, folded and classified."""
    ctx = Ctx(aliases)
    e = dict(env)
    exec_block(loop.body, e, ctx)
    name, pnote = printed_list(post, ctx.appends, ctx, e)
    if pnote:
        result["notes"].append(pnote)
    if name is None:
        raise Unclassifiable(pnote)
    if ctx.has_defs or ctx0.has_defs:
        result["notes"].append("program defines functions/classes")
    out = ctx.appends[name]
    dv = ctx.as_draw(out)
    if pnote and "for sublist in" in pnote and dv is not None and dv.kind == "multinomial" and sc(dv.params):
        pv = [float(x) for x in dv.params["pvals"]]
        if max(pv) - min(pv) > 1e-12:
            raise Unclassifiable("pooled counts of a multinomial with unequal probabilities")
        L = Law("binomial", {"n": num(dv.params["n"]), "p": num(pv[0])},
                "pooled multinomial count vectors (all categories equiprobable, so every count is Binomial(n, p))",
                notes=["prints the flattened count vectors: all components pooled; values dependent within a draw",
                       pnote + " (only part of the draws is printed)"],
                extra={"multinomial": {"n": num(dv.params["n"]), "pvals": num(pv)}})
    else:
        L = law(out, ctx)
        if L.family == "constant":
            raise Unclassifiable(f"output folds to the constant {L.params['value']!r} (suspect: unmodelled mutation)")
    result["notes"].extend(ctx.notes)
    result["output_expression"] = show(out, ctx)
    if pnote and "[:" in pnote:
        L.notes.append(pnote + " (only part of the draws is printed)")
    return L


def analyze_program(src: str) -> dict:
    """Literals, derived constants, sampler calls and the classification of one program (parsed, never run)."""
    tree = ast.parse(src)
    aliases = import_aliases(tree)
    li, loop = find_main_loop(tree)
    result: dict = {"literals": {}, "derived_constants": {}, "sampler_calls": [], "notes": []}
    ctx0 = Ctx(aliases)
    env: dict = {}
    pre = tree.body if loop is None else tree.body[:li]
    exec_block(pre, env, ctx0)
    module_constants(pre, env, result)
    result["sampler_calls"] = list_sampler_calls(tree, env, aliases)
    if loop is None:
        raise_note = "no top-level `for _ in range(N)` sampling loop"
        result["classification"] = {"status": "unclassifiable", "reason": raise_note}
        return result
    result["n_draws"] = loop.iter.args[0].value
    post = tree.body[li + 1:]
    sel, m = find_selector(loop.body, env, ctx0)
    try:
        if sel:
            L = selector_law(loop, post, env, aliases, sel, m, result)
        else:
            L = single_law(loop, post, env, aliases, ctx0, result)
        result["classification"] = {"status": "classified", "law": L}
    except Unclassifiable as exc:
        result["classification"] = {"status": "unclassifiable", "reason": str(exc)}
    return result


def list_sampler_calls(tree, env, aliases):
    ctx = Ctx(aliases)
    rng_names = {t.id for s in ast.walk(tree) if isinstance(s, ast.Assign) for t in s.targets
                 if isinstance(t, ast.Name) and isinstance(s.value, ast.Call)
                 and (path_of(s.value.func, {}, ctx) or "") in RNG_CTORS}
    env2 = dict(env)
    for r in rng_names:
        env2[r] = C(RNGObj())
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        p = path_of(node.func, env2, ctx)
        if not p or not sampler_of(p):
            continue
        lib, name, frozen = sampler_of(p)

        def res(a):
            v = fold(a, env, Ctx(aliases))
            if isc(v) and not isinstance(v.value, RNGObj):
                try:
                    x = num(v.value.tolist() if isinstance(v.value, np.ndarray) else v.value)
                    json.dumps(x)
                    return x
                except (TypeError, ValueError):
                    pass
            return {"expr": ast.unparse(a)}
        args = [res(a) for a in node.args]
        kwargs = {k.arg: res(k.value) for k in node.keywords if k.arg}
        if frozen:
            fc = node.func.value
            kwargs = {"frozen_args": [res(a) for a in fc.args],
                      "frozen_kwargs": {k.arg: res(k.value) for k in fc.keywords if k.arg}, **kwargs}
        out.append({"call": ast.unparse(node), "sampler": p.replace("Generator.", "numpy.random.Generator."),
                    "args": args, "kwargs": kwargs})
    return out
