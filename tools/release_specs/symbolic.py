"""Symbolic values of the small evaluator: constants, unknowns, draws (``Draw``) and the evaluation context."""
from __future__ import annotations

import ast

import numpy as np


class RNGObj:
    def __repr__(self):
        return "<Generator>"


class Unclassifiable(Exception):
    pass


def C(v):
    return ast.Constant(value=v)


def isc(n) -> bool:
    return isinstance(n, ast.Constant)


def isnum(n) -> bool:
    return isc(n) and isinstance(n.value, (int, float, np.integer, np.floating)) and not isinstance(n.value, bool)


DRAW = "__draw__"


def dnode(d) -> ast.Call:
    return ast.Call(func=ast.Name(id=DRAW, ctx=ast.Load()), args=[C(d.id)], keywords=[])


def F(name, *args) -> ast.Call:
    return ast.Call(func=ast.Name(id="F:" + name, ctx=ast.Load()), args=list(args), keywords=[])


def fname(n):
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("F:"):
        return n.func.id[2:]
    return None


def unk(n) -> ast.Name:
    try:
        text = ast.unparse(n)
    except Exception:  # noqa: BLE001
        text = type(n).__name__
    return ast.Name(id="?" + text, ctx=ast.Load())


def has_unknown(n) -> str | None:
    for x in ast.walk(n):
        if isinstance(x, ast.Name) and x.id.startswith("?"):
            return x.id[1:]
    return None


class Draw:
    def __init__(self, did, kind, params, size=None, api="", text=""):
        self.id, self.kind, self.params, self.size, self.api, self.text = did, kind, params, size, api, text


class Ctx:
    def __init__(self, aliases):
        self.aliases = aliases
        self.draws: list[Draw] = []
        self.appends: dict[str, ast.AST] = {}
        self.notes: list[str] = []
        self.override: dict[str, int] = {}
        self.selector_weights = None
        self.has_defs = False

    def draw(self, kind, params, size=None, api="", text="") -> ast.Call:
        d = Draw(len(self.draws), kind, params, size, api, text)
        self.draws.append(d)
        return dnode(d)

    def as_draw(self, n):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == DRAW:
            return self.draws[n.args[0].value]
        return None


def show(n, ctx=None) -> str:
    """Readable text of a folded expression (draws shown as their API call)."""
    class R(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if ctx is not None and ctx.as_draw(node) is not None:
                d = ctx.as_draw(node)
                return ast.Name(id=f"<{d.kind}#{d.id}>", ctx=ast.Load())
            if fname(node):
                node.func = ast.Name(id=fname(node), ctx=ast.Load())
            return node

        def visit_Constant(self, node):
            v = node.value
            if isinstance(v, np.ndarray):
                return ast.Name(id=repr(v.tolist()), ctx=ast.Load())
            if isinstance(v, (np.floating, np.integer)):
                return ast.Constant(value=v.item())
            if isinstance(v, float):
                return ast.Constant(value=float(f"{v:.15g}"))
            return node
    try:
        import copy
        return ast.unparse(R().visit(copy.deepcopy(n)))
    except Exception:  # noqa: BLE001
        return "<expr>"
