"""Our registry, read-only: family names from ``ub_core/distributions/`` (by AST) and its ``validate()``.
The project is the checkout that holds this file, never another one on the path."""
from __future__ import annotations

import ast
import os
import sys


# The project root: two folders above this package (tools/release_specs/).
MAIN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))



def our_families() -> dict[str, str]:
    """Family name -> param_doc, read statically from the modules of ub_core/distributions/ (their ``_register``
    calls)."""
    folder = os.path.join(MAIN, "ub_core", "distributions")
    nodes = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                nodes.extend(ast.walk(ast.parse(fh.read())))
    out = {}
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_register":
            kw = {k.arg: k.value for k in node.keywords}
            if isinstance(kw.get("name"), ast.Constant):
                doc = kw.get("param_doc")
                out[kw["name"].value] = ast.unparse(doc) if doc is not None else ""
    return out


def registry_validator():
    """Our registry's validate(), imported read-only (no bytecode written); None if it cannot be imported."""
    sys.dont_write_bytecode = True
    sys.path.insert(0, MAIN)
    try:
        from ub_core.distributions import FAMILIES  # noqa: WPS433
    except Exception:  # pragma: no cover
        return None
    finally:
        sys.path.pop(0)

    def validate(family, params):
        fam = FAMILIES.get(family)
        if fam is None:
            return None
        try:
            fam.validate(params)
            return "ok"
        except Exception as exc:  # noqa: BLE001
            return f"error: {exc}"

    return validate
