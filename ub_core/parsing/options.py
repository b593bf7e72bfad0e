"""Options: which option label a reply chose (``parse_option``).

Part of :mod:`ub_core.parsing` (see its docstring for the decisions every parser shares)."""

from __future__ import annotations

import re
from typing import Sequence

from .text import Parsed, _guarded, _prepare, _snip, _str
from .region import _answer_region, _tidy

# --------------------------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------------------------

_OPTION_PREFIX_RE = re.compile(
    r"^(?:(?:the\s++|my\s++)?+(?:final\s++)?+(?:answer|option|choice|selection|pick)\s*+(?:is\b)?\s*+[:=#]?"
    r"|i\s++(?:choose|chose|pick|select|go\s++with|will\s++go\s++with|'ll\s++go\s++with)\s*+:?)\s*+(?=\S)",
    re.IGNORECASE,
)
_OPTION_MARKER_RE = re.compile(
    r"[:=]|\b(?:is|choose|chose|pick|picked|select|selected|go\s+with|answer)\b", re.IGNORECASE
)
_NEXT_WORD_RE = re.compile(r"\s++([a-z]+)")
_LABEL_FOLLOWERS = frozenset(
    "or and vs versus nor is was seems looks would wins because since".split()
)
_BRACKETS = (("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"))


def _decor(s: str) -> str:
    """Strip decoration around an option: brackets, quotes, bold, 'Option'/'Answer:' prefixes, punctuation."""
    s = " ".join(_tidy(s).split())
    for _ in range(12):
        old = s
        s = s.strip().strip("*_`\"'\u201c\u201d\u2018\u2019").strip()
        for left, right in _BRACKETS:
            if len(s) >= 2 and s.startswith(left) and s.endswith(right):
                s = s[1:-1].strip()
        if s.endswith(")") and "(" not in s:
            s = s[:-1].strip()
        s = s.rstrip(".,;:!?").strip()
        m = _OPTION_PREFIX_RE.match(s)
        if m:
            s = s[m.end():]
        if s == old:
            break
    return s


def _option_matches(hay: str, labels: Sequence[str]) -> list[tuple[int, int, int]]:
    found: list[tuple[int, int, int]] = []
    for idx, lab in enumerate(labels):
        words = lab.split()
        if not words:
            continue
        pattern = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)
        article = len(lab) == 1 and lab.casefold() in ("a", "i")
        for m in pattern.finditer(hay):
            if article:
                before = hay[max(0, m.start() - 2): m.start()]
                after = hay[m.end(): m.end() + 2]
                decorated = before.endswith(("(", "[", "{", "*")) or after.startswith((")", "]", "}", "*"))
                if not decorated:
                    if hay[m.start()].islower():
                        continue
                    nxt = _NEXT_WORD_RE.match(hay, m.end())
                    if nxt and nxt.group(1) not in _LABEL_FOLLOWERS:
                        continue  # "A good idea", "I think": the English word, not the label
            found.append((m.start(), m.end(), idx))
    found.sort()
    return found[-200:]


def _resolve_options(hay: str, found: list[tuple[int, int, int]], labels: Sequence[str],
                     options: Sequence[str]) -> Parsed | None:
    if not found:
        return None
    keep = [
        f for f in found
        if not any(o[2] != f[2] and o[0] <= f[0] and f[1] <= o[1] and (o[1] - o[0]) > (f[1] - f[0]) for o in found)
    ]
    chosen = {f[2] for f in keep}
    if len(chosen) == 1:
        return Parsed.success(keep[0][2])
    marker_end = None
    for mk in _OPTION_MARKER_RE.finditer(hay, 0, keep[-1][0]):
        marker_end = mk.end()
    if marker_end is not None:
        after = {f[2] for f in keep if f[0] >= marker_end}
        if len(after) == 1:
            return Parsed.success(after.pop())
    names = ", ".join(_snip(options[i], 20) for i in sorted(chosen)[:5])
    return Parsed.failure(f"ambiguous: the answer mentions {len(chosen)} options ({names})")


_TOKEN_SPLIT_RE = re.compile(r"[\s,;]+")


def _output_tokens(s: str) -> tuple[str, ...]:
    return tuple(tok for tok in _TOKEN_SPLIT_RE.split(_decor(s).casefold()) if tok)


def _printed_output_option(t: str, opts: Sequence[str]) -> Parsed:
    """Strict matching for multi-line outputs: the whole answer region, token for token."""
    region, strong = _answer_region(t)
    wanted = [_output_tokens(_prepare(o) or "") for o in opts]
    # the answer region first; a bare multi-line reply (no braces) is its own answer region
    for hay in ([region] if region is not None else []) + ([] if strong else [t]):
        got = _output_tokens(hay)
        hits = [i for i, w in enumerate(wanted) if w and w == got]
        if hits:  # equal labels: the first wins, as for single-line options
            return Parsed.success(hits[0])
    shown = region if region is not None else t
    return Parsed.failure(f"printed output {_snip(shown)} matches none of the {len(opts)} options exactly")


@_guarded
def parse_option(text: str, options: Sequence[str]) -> Parsed:
    """Match a reply against option labels; ``value`` is the index into ``options``.

    Matching is case-insensitive with whitespace collapsed, on the answer region of :func:`extract_answer`:

    1. exact match after stripping decoration (``Option B``, ``(B)``, ``B)``, ``**B**``, ``{B}``,
       ``answer: b``, quotes, trailing punctuation); when several labels are equal the first wins;
    2. otherwise the options appearing as whole words in the region; a match inside a longer matching option
       does not count (``"heads up"`` beats ``"heads"``); several options -> the one after the last marker
       (``:``, ``=``, ``is``, ``choose``, ``pick``, ...) if unique, else failure ``ambiguous``.  The
       single-letter labels ``A`` and ``I`` are not matched as the English words "a" / "I";
    3. when the region mentions no option and did not come from an ``<answer>`` block or ``"answer"`` key,
       steps 1-2 are repeated on the whole reply (this also covers multi-line labels).

    Fails when no option or several options match.

    Options that are multi-line printed outputs (any label contains a newline) are matched strictly: the answer
    region's tokens (split on whitespace, commas and semicolons) must equal exactly one option's tokens, so a
    printout with a missing or an extra line is a failure rather than a partial match.
    """
    t = _prepare(text)
    if t is None:
        return Parsed.failure(f"expected a string, got {type(text).__name__}")
    if options is None or isinstance(options, (str, bytes)):
        return Parsed.failure("options must be a sequence of labels")
    opts = [_str(o) for o in options]
    if not opts:
        return Parsed.failure("no options given")
    if not t.strip():
        return Parsed.failure("empty input")
    if any("\n" in o for o in opts):
        return _printed_output_option(t, opts)
    labels = [_decor(_prepare(o) or "") for o in opts]
    folded = [lab.casefold() for lab in labels]
    raw, strong = _answer_region(t)
    hays = []
    if raw is not None:
        hays.append(raw)
    if not strong:
        hays.append(t)
    for hay in hays:
        norm = " ".join(hay.split())
        key = _decor(norm).casefold()
        if key:
            for idx, lab in enumerate(folded):
                if lab and lab == key:
                    return Parsed.success(idx)
        res = _resolve_options(norm, _option_matches(norm, labels), labels, opts)
        if res is not None:
            return res
    return Parsed.failure(f"no option matched the answer {_snip(_tidy(raw or t))}")
