"""How the published release names its task folders and categories: a leaf module, so that the bank (which files
each release row under its folder's category) and ``ub_core.release_tools.official`` (which reads a release checkout)
share one parser without the bank reaching up to ``official``."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["normalise_category", "release_folder_info"]

_CATEGORY_ALIASES = {
    "textexplicit": "text_explicit", "textimplicit": "text_implicit", "codeexplicit": "code_explicit",
    "codeimplicit": "code_implicit", "realworld": "real_world", "realworldscenario": "real_world",
    "shuffle": "shuffling", "shuffling": "shuffling", "multimodal": "multimodal",
}



def normalise_category(name: Any) -> str:
    """Map released category names ("Text Explicit", "RealWorld", ...) onto ours; unknown ones are snake-cased."""
    text = str(name or "").strip()
    key = re.sub(r"[^a-z]", "", text.lower())
    if key in _CATEGORY_ALIASES:
        return _CATEGORY_ALIASES[key]
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "unknown"


_FOLDER_RE = re.compile(r"^(textual|text|code)_(multimodal_)?(explicit|implicit)_(concentrated|spread_out|spread)"
                        r"(?:_(.+))?$")


def release_folder_info(folder: str) -> dict:
    """Category, regime and modality of a release task folder.

    ``textual_explicit_concentrated_gpt-5.4`` -> ``text_explicit`` / ``concentrated`` (``spread_out`` ->
    ``spread``, our name; the suffix is the model that wrote the program); ``textual_multimodal_explicit_*`` ->
    category ``multimodal``; ``realworld_human`` -> ``real_world``; ``shuffling_human`` -> ``shuffling``. Other
    names: category from :func:`normalise_category`, regime ``none``."""
    name = str(folder).strip()
    m = _FOLDER_RE.match(name)
    if m:
        medium, multi, kind, regime, source = m.groups()
        category = "multimodal" if multi else f"{'code' if medium == 'code' else 'text'}_{kind}"
        return {"category": category, "regime": "concentrated" if regime == "concentrated" else "spread",
                "modality": "multimodal" if multi else "unimodal", "source": source}
    low = name.lower()
    for prefix, category in (("realworld", "real_world"), ("real_world", "real_world"), ("shuffling", "shuffling")):
        if low.startswith(prefix):
            return {"category": category, "regime": "none", "modality": "unimodal",
                    "source": name[len(prefix):].strip("_") or None}
    return {"category": normalise_category(name), "regime": "none", "modality": "unimodal", "source": None}
