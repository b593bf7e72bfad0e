"""One reader for multiple-choice replies: which option (letter) a free-text reply chooses.

Design notes: docs/design/mcq-reader.md.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Sequence

from .text import invalid_reply_reason

__all__ = ["MCQRead", "read_mcq", "LETTERS", "MAX_CHARS", "WINDOW", "MAX_CUES"]

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MAX_CHARS = 200_000
WINDOW = 400
MAX_CUES = 64


@dataclass(frozen=True)
class MCQRead:
    """A read reply: ``letter`` (``None`` when unreadable), ``index`` into the options, and ``reason``: how it was
    read (``json``, ``cue``, ``last line``, ``marked letter``) or why it is unreadable."""

    letter: str | None
    reason: str

    @property
    def ok(self) -> bool:
        return self.letter is not None

    @property
    def index(self) -> int | None:
        return None if self.letter is None else LETTERS.index(self.letter)


class _Ambiguous(Exception):
    pass


class _Unreadable(Exception):
    """A cue named something that is not an option (a letter or value out of range)."""


# ------------------------------------------------------------------------------------------------ options

_NUM_RE = re.compile(r"[-+\u2212]?[$\u20ac\u00a3]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?|[-+]?\.\d+%?")


def _fold(s: str) -> str:
    return " ".join(s.casefold().split())


# Number words that name a value ("Three" is the option 3). Only whole option texts are read this way.
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
# Trailing separator punctuation: MMLU-style inline options "(A) 10. (B) 20." leave "10." as option A's text.
_OPTION_TAIL = " \t\r\n.,;:"


def _option_key(text: str) -> str:
    """An option text written for comparison: Unicode and LaTeX normalised (``\\frac{a}{b}`` -> ``a/b``,
    ``\\pi`` -> ``π``, ``$`` dropped), trailing separator punctuation and surrounding whitespace removed, case
    folded and whitespace collapsed."""
    t = _delatex(_normalise(text)).replace("$", "")
    return _fold(t.strip().rstrip(_OPTION_TAIL))


def _number(token: str) -> float | None:
    t = token.replace("\u2212", "-").replace(",", "").rstrip("%").replace("$", "").replace("\u20ac", "")
    t = t.replace("\u00a3", "")
    try:
        v = float(t)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _option_value(key: str) -> float | None:
    """The value an option names (``key`` from :func:`_option_key`): a number (``45.`` -> 45) or a number word
    (``Three`` -> 3); None otherwise."""
    t = key.strip("*").strip()
    if t in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[t])
    m = _NUM_RE.fullmatch(t)
    return _number(m.group(0)) if m else None


class _Options:
    def __init__(self, options: Any):
        if isinstance(options, bool):
            raise TypeError("options must be option texts or a count")
        if isinstance(options, int):
            self.n = int(options)
            texts: list[str] = []
        else:
            texts = [o if isinstance(o, str) else str(o) for o in options]
            self.n = len(texts)
        if not 1 <= self.n <= len(LETTERS):
            raise ValueError(f"needs 1 to {len(LETTERS)} options, got {self.n}")
        self.folded = [_option_key(t) for t in texts]
        self.values = [_option_value(f) for f in self.folded]
        if any(v is not None for v in self.values):  # "None" among "One", "Four", "Five" is the count 0
            self.values = [0.0 if f == "none" else v for f, v in zip(self.folded, self.values)]
        self.maxlen = max((len(f) for f in self.folded), default=0)
        # real benchmark questions repeat an option text (MMLU: "manipulative" twice): a reply naming that text
        # names all of them, and is read as ambiguous between them only; letters still read as usual
        self.twins = {i: [j for j, g in enumerate(self.folded) if g == f] for i, f in enumerate(self.folded) if f}

    def by_text(self, i: int) -> int:
        """``i``, the option a text names; ambiguous when another option has the same text."""
        same = self.twins.get(i, [i])
        if len(same) > 1:
            raise _Ambiguous(f"options {', '.join(LETTERS[j] for j in same)} have the same text")
        return i


# ------------------------------------------------------------------------------------------------ text

def _normalise(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        for q in "\u201c\u201d\u201e\u00ab\u00bb":
            text = text.replace(q, '"')
        for q in "\u2018\u2019\u201a":
            text = text.replace(q, "'")
        text = text.replace("\u2212", "-")
    return text


# LaTeX that writes a value or words another way: \frac{15}{64} is 15/64, \pi is π, \mbox{has a ...} is prose.
_FRAC_RE = re.compile(r"\\[dt]?frac[ \t]{0,3}\{([^{}]{0,60})\}[ \t]{0,3}\{([^{}]{0,60})\}")
_SQRT_RE = re.compile(r"\\sqrt[ \t]{0,3}\{([^{}]{0,60})\}")
_TEXT_CMD_RE = re.compile(r"\\(?:mbox|text|textbf|textit|textrm|mathrm|mathbf|mathit|operatorname)[ \t]{0,3}"
                          r"\{([^{}]{0,400})\}")
_SYMBOL_RE = re.compile(r"\\(pi|therefore|implies|left|right|displaystyle|quad|qquad|[ ,;!:])(?![A-Za-z])")
_SYMBOLS = {"pi": "\u03c0", "therefore": " therefore ", "implies": " so "}


# Plain-text math written two ways: sqrt(2) is √2, 4*sqrt(2) and 4√2 are one value, 3pi is 3π.
_PLAIN_SQRT_RE = re.compile(r"\bsqrt[ \t]{0,2}\(([^()]{1,30})\)", re.IGNORECASE)
_TIMES_SYMBOL_RE = re.compile(r"[ \t]{0,2}\*[ \t]{0,2}(?=[\u221a\u03c0])")
_PLAIN_PI_RE = re.compile(r"(?<![A-Za-z])pi(?![A-Za-z])")


def _delatex(text: str) -> str:
    """Plain text for LaTeX and plain-text math that write a value another way (one pass of each bounded
    pattern: linear)."""
    if "\\" in text:
        text = _SQRT_RE.sub("\u221a\\1", text)
        text = _TEXT_CMD_RE.sub(r"\1", text)
        text = _FRAC_RE.sub(r"\1/\2", text)
        text = _SYMBOL_RE.sub(lambda m: _SYMBOLS.get(m.group(1), " "), text)
    if "sqrt" in text or "SQRT" in text:
        text = _PLAIN_SQRT_RE.sub("\u221a\\1", text)
    if "pi" in text:
        text = _PLAIN_PI_RE.sub("\u03c0", text)
    if "*" in text:
        text = _TIMES_SYMBOL_RE.sub("", text)
    return text


_THINK_END_RE = re.compile(r"</think\s{0,3}>", re.IGNORECASE)
_THINK_OPEN_RE = re.compile(r"<think\s{0,3}>", re.IGNORECASE)
_TURN_RE = re.compile(r"[ \t]{0,8}(?:A|Q|Assistant)[ \t]{0,3}:[ \t]{0,8}(?=\S)")
_NEXT_Q_RE = re.compile(r"\n[ \t]{0,8}(?:Q|Question)[ \t]{0,3}:")
# Peeled from the head of an answer: whitespace, markdown, quotes, bullets, colons, LaTeX math delimiters.
_HEAD_JUNK = " \t\r\n*_`#>\"'\u2022:=$~"
_WRAP_RE = re.compile(r"\\(?:boxed|fbox|text|textbf|textrm|mathrm|mathbf|mbox)[ \t]{0,3}\{|\\\(|\\\[|\\displaystyle"
                      r"|(?:option|choice|letter)[ \t]{1,3}(?=\(?[A-Za-z](?![A-Za-z]))", re.IGNORECASE)
_TAIL_JUNK = " \t\r\n*_`\"'.,;:!?)]}$~\\"
_LETTER_BRACKET_RE = re.compile(r"[(\[{]([A-Za-z])[)\]}]")
_LETTER_BARE_RE = re.compile(r"([A-Za-z])(?![A-Za-z0-9'\u2019])")
_WORD_RE = re.compile(r"[ \t]{1,8}([A-Za-z0-9]{1,20})")
_LETTER_FOLLOWERS = frozenset("or and nor is was would should must because since as vs but then seems appears "
                              "looks fits".split())
_SEP_RE = re.compile(r"[ \t]{0,3}(?:\bor\b|\band\b|/|&|,|\bvs\.?)[ \t]{0,3}", re.IGNORECASE)

_CUE_RE = re.compile(
    r"(?<!each )(?<!every )(?<!other )(?<!following )"
    r"\b(?:final[ _]answer|correct[ _]answer|best[ _]answer|right[ _]answer|answer|correct[ _]option|"
    r"correct[ _]choice|best[ _]option|option|choice)[\"'*]{0,3}[ \t]{0,3}"
    r"(?:(?:would|should|will|must)[ \t]{1,3}be\b|is\b|:|=|-(?!\w))"
    r"(?:[ \t]{0,3}(?:therefore|then|clearly|thus|likely|probably|definitely|indeed|simply)\b,?)?"
    r"|\bI(?:[ \t]{1,3}(?:would|will|shall))?(?:'d|'ll)?[ \t]{1,3}(?:choose|pick|select|go[ \t]{1,3}with)\b"
    r"|\banswer[ \t]{0,3}(?=\()|\\boxed[ \t]{0,3}\{|<answer>",
    re.IGNORECASE)
_IS_CORRECT_RE = re.compile(
    r"(?:\(([A-Za-z])\)|\b([A-Z]))[ \t]{0,3}(?:is|would[ \t]{1,3}be)[ \t]{1,3}(?:the[ \t]{1,3})?"
    r"(?:correct|right|best)\b")
# A conclusion drawn in a sentence: "So, no, we don't return", "thus yes.", or a reply that opens "No, you ...".
# Read as an option's own text followed by a separator, never as a letter or a value ("So A is out", "so 10*9").
_CONCLUSION_RE = re.compile(r"(?:\b(?:so|thus|therefore|hence|consequently|overall|in conclusion|in summary|in short)\b"
                            r"|^)[ \t,:]{0,4}", re.IGNORECASE | re.MULTILINE)
# "Therefore, option (C) is the false statement.": a conclusion naming one bracketed letter
_CONCLUSION_LETTER_RE = re.compile(r"\((?:option[ \t]{1,3}|choice[ \t]{1,3})?([A-Z])\)")
_CONCLUSION_WORD_RE = re.compile(r"so|thus|therefore|hence|consequently|overall|in conclusion|in summary|in short",
                                 re.IGNORECASE)
_CONCLUSION_END = ",.;!"
# An option quoted in the final line's prose: only option texts of several words, long enough not to be chance.
MENTION_MIN_CHARS = 12
_MARKED_RE = re.compile(r"\(([A-Z])\)|\*\*([A-Z])\*\*")
_JSON_KEYS = ("answer", "final_answer", "final answer", "choice", "option", "letter", "prediction")


def _peel(seg: str) -> str:
    """Drop the junk at the head of an answer (bounded number of rounds)."""
    for _ in range(12):
        before = seg
        seg = seg.lstrip(_HEAD_JUNK)
        if seg[:1] == "-" and not seg[1:2].isdigit() and seg[1:2] != ".":  # a bullet, not a minus sign
            seg = seg[1:]
        m = _WRAP_RE.match(seg)
        if m:
            seg = seg[m.end():]
        if seg == before:
            break
    return seg


def _strip_tail(seg: str) -> str:
    return seg.rstrip(_TAIL_JUNK)


def _read_head(seg: str, opts: _Options, strict: bool, allow_colon: bool = True) -> tuple[int, str] | None:
    """The option named at the head of ``seg`` and the text after it; None when nothing is named.

    ``strict``: the whole segment must be the answer (or a letter in brackets / with ``)`` followed by text).
    Raises _Ambiguous / _Unreadable."""
    seg = _peel(seg)
    if not seg:
        return None
    whole = _strip_tail(seg)
    # letters ---------------------------------------------------------------------------------------------
    letter, rest, delim = None, "", ""
    m = _LETTER_BRACKET_RE.match(seg)
    if m:
        letter, rest, delim = m.group(1).upper(), seg[m.end():], "bracket"
    else:
        m = _LETTER_BARE_RE.match(seg)
        if m:
            ch = m.group(1)
            after = seg[m.end():m.end() + 3]
            rest = seg[m.end():]
            if len(_strip_tail(seg)) == 1:
                letter, delim = ch.upper(), "alone"
            elif after[:1] in (")", "]", "}"):
                letter, rest, delim = ch.upper(), rest[1:], "bracket"
            elif ch.isupper():
                if after[:1] in (".", ":", ",", ";", "*", "!", "?", "\n", "\r"):
                    letter, delim = ch, after[:1]
                elif after[:1] in (" ", "\t"):
                    word = _WORD_RE.match(seg, m.end())
                    nxt = word.group(1) if word else ""
                    # "A bird", "I think": the article / pronoun; "B because", "A or B", "A is correct": a letter
                    if not (ch in "AI" and nxt[:1].islower() and nxt not in _LETTER_FOLLOWERS):
                        letter, delim = ch, "space"
    if letter is not None and delim == ":" and not allow_colon:
        letter = None  # "A: ..." at a line start is a turn prefix
    if letter is not None:
        idx = LETTERS.index(letter)
        if idx >= opts.n:
            raise _Unreadable(f"letter {letter} is not one of {LETTERS[0]}-{LETTERS[opts.n - 1]}")
        after_letter = rest.lstrip(" \t.:)-*_`\"'")
        j = _text_prefix(after_letter, opts) if after_letter and opts.folded else None
        if j is not None and idx not in opts.twins.get(j, [j]):
            raise _Ambiguous(f"letter {letter} but the text of option {LETTERS[j]}")
        # strictly (a whole line), "(B) the blue book" is an answer but "(A) says one thing" is a mention
        if not strict or delim == "alone" or not _strip_tail(rest).strip(" \t*_`") or (
                delim == "bracket" and j is not None and idx in opts.twins.get(j, [j])):
            _check_alternative(rest, idx, opts)
            return idx, rest
    # option texts ----------------------------------------------------------------------------------------
    if opts.folded:
        if strict:
            key = _fold(whole)
            hits = [i for i, f in enumerate(opts.folded) if f and f == key]
            if len(hits) == 1:
                return hits[0], ""
            if len(hits) > 1:
                raise _Ambiguous(f"options {', '.join(LETTERS[i] for i in hits)} have the same text")
        else:
            j = _text_prefix(seg, opts)
            if j is not None:
                rest = seg[_prefix_len(seg, opts.folded[j]):]
                _check_alternative(rest, opts.by_text(j), opts)
                return j, rest
    # values ----------------------------------------------------------------------------------------------
    m = _NUM_RE.match(seg)
    if m and not seg[m.end():m.end() + 1].isalnum():
        if strict and _strip_tail(seg[m.end():]).strip() != "":
            return None
        v = _number(m.group(0))
        if v is None:
            return None
        hits = [i for i, ov in enumerate(opts.values) if ov is not None and math.isclose(ov, v, rel_tol=1e-9,
                                                                                       abs_tol=1e-12)]
        if len(hits) == 1:
            _check_alternative(seg[m.end():], hits[0], opts)
            return hits[0], seg[m.end():]
        if len(hits) > 1:
            raise _Ambiguous(f"value {m.group(0)} equals options {', '.join(LETTERS[i] for i in hits)}")
        if any(ov is not None for ov in opts.values):
            raise _Unreadable(f"value {m.group(0)} is not an option")
    return None


def _prefix_len(seg: str, folded_option: str) -> int:
    """Length of the raw head of ``seg`` whose folded form is ``folded_option``."""
    words = folded_option.split(" ")
    pos = 0
    for w in words:
        while pos < len(seg) and seg[pos].isspace():
            pos += 1
        pos += len(w)
    return pos


def _text_prefix(seg: str, opts: _Options) -> int | None:
    """Index of the longest option text that ``seg`` starts with as whole words (case-folded); None if none."""
    head = _fold(seg[: opts.maxlen * 2 + 8])
    best, best_len = None, 0
    for i, f in enumerate(opts.folded):
        if f and head.startswith(f) and len(f) > best_len:
            nxt = head[len(f):len(f) + 1]
            if not (nxt.isalnum() and f[-1:].isalnum()):
                best, best_len = i, len(f)
    return best


def _check_alternative(rest: str, idx: int, opts: _Options) -> None:
    """``A or B``, ``Yes/No``: a second, different option right after the first is a tie."""
    m = _SEP_RE.match(rest)
    if not m:
        return
    try:
        other = _read_head(rest[m.end():][:WINDOW], opts, strict=False, allow_colon=True)
    except _Ambiguous:
        raise
    except _Unreadable:
        return
    if other is not None and other[0] != idx:
        raise _Ambiguous(f"names both {LETTERS[idx]} and {LETTERS[other[0]]}")


def _cue_segment(text: str, start: int) -> str:
    """The text after a cue: its line, or the next non-empty line when the cue ends its line."""
    window = text[start:start + WINDOW]
    stripped = window.lstrip(" \t*_`\"':")
    if stripped.startswith(("\n", "\r")):
        window = stripped.lstrip()
    nl = window.find("\n")
    return window if nl < 0 else window[:nl]


def _boxed(text: str, start: int) -> str:
    """The balanced content of ``\\boxed{`` whose ``{`` ends at ``start`` (within the window)."""
    depth = 1
    end = min(len(text), start + WINDOW)
    for k in range(start, end):
        c = text[k]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start:k]
    return text[start:end]


def _unbox(seg: str) -> str:
    """``\\text{No}`` -> ``No``, ``{B}`` -> ``B``: LaTeX inside a boxed answer."""
    seg = re.sub(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox)[ \t]{0,3}\{([^{}]{0,200})\}", r"\1", seg)
    return seg.replace("{", " ").replace("}", " ")


def _conclusion_head(seg: str, opts: _Options) -> tuple[int, str] | None:
    """The option whose own text opens ``seg`` and is followed by a separator (``no, we don't``); None if none."""
    seg = _peel(seg)
    j = _text_prefix(seg, opts) if opts.folded else None
    if j is None or opts.values[j] is not None:  # "1. Understand ...", "so 45, ...": list items and arithmetic
        return None
    rest = seg[_prefix_len(seg, opts.folded[j]):]
    if rest.strip() and rest.lstrip(" \t")[:1] not in _CONCLUSION_END:
        return None
    _check_alternative(rest, opts.by_text(j), opts)
    return j, rest


def _line_at(text: str, start: int) -> str:
    """The rest of the line from ``start`` (at most :data:`WINDOW` characters)."""
    window = text[start:start + WINDOW]
    nl = window.find("\n")
    return window if nl < 0 else window[:nl]


def _in_option_list(text: str, start: int, idx: int, opts: _Options) -> bool:
    """Whether the line at ``start`` has a neighbouring non-empty line opening with a different option's text
    (the reply lists the options). Reads at most :data:`WINDOW` characters either side."""
    before = text[max(0, start - WINDOW):start].rstrip().rsplit("\n", 1)[-1]
    after_start = text.find("\n", start, start + WINDOW)
    after = text[after_start:after_start + WINDOW].lstrip().split("\n", 1)[0] if after_start >= 0 else ""
    for line in (before, after):
        try:
            other = _conclusion_head(line, opts) if line.strip() else None
        except (_Ambiguous, _Unreadable):
            other = None
        if other is not None and other[0] != idx:
            return True
    return False


def _conclusion_letter(line: str, opts: _Options) -> tuple[int, str] | None:
    """The one bracketed letter a conclusion's line names (``Thus, the order is (C) 35.``); None when none or
    several (``(C) ... or (D) ...``)."""
    letters = {m.group(1) for m in _CONCLUSION_LETTER_RE.finditer(line)}
    if len(letters) != 1:
        return None
    idx = LETTERS.index(letters.pop())
    return (idx, "") if idx < opts.n else None


# BBH navigate asks "do you return to the starting point?"; a last line denying it ("you do not return", "you
# haven't returned", "you will not be able to return") answers No. Only for the options Yes / No.
_DENIED_RETURN_RE = re.compile(
    r"\b(?:you|we|i)[ \t]{1,3}"
    r"(?:(?:do|does|did|will|would|could|can|have|has|are|wo|ca)[ \t]{0,3}(?:n't|n\u2019t|[ \t]not)"
    r"|never)[ \t*_]{1,5}(?:be[ \t]{1,3}able[ \t]{1,3}to[ \t]{1,3})?(?:necessarily[ \t]{1,3})?"
    r"(?:return|get[ \t]{1,3}back|come[ \t]{1,3}back"
    r"|end[ \t]{1,3}up[ \t]{1,3}(?:back[ \t]{1,3})?at[ \t]{1,3}the[ \t]{1,3}start)",
    re.IGNORECASE)


def _denied_return(line: str, opts: _Options) -> int | None:
    """Index of option ``No`` when the options are Yes / No and the line denies returning; None otherwise."""
    if sorted(opts.folded) != ["no", "yes"] or not _DENIED_RETURN_RE.search(line):
        return None
    return opts.folded.index("no")


def _mentioned(line: str, opts: _Options) -> int | None:
    """The one option whose (long, several-word) text the line quotes as whole words; None when none or several.

    ``f has a local minimum at P and a saddle point at Q.`` names that option; a text found only inside another
    option's quoted text does not count. Cost: one ``str.find`` scan of the line per option."""
    key = _fold(line)
    spans = []
    for i, f in enumerate(opts.folded):
        if len(f) < MENTION_MIN_CHARS or " " not in f:
            continue
        k = key.find(f)
        while k >= 0:
            before, after = key[k - 1:k], key[k + len(f):k + len(f) + 1]
            if not (before.isalnum() and f[0].isalnum()) and not (after.isalnum() and f[-1].isalnum()):
                spans.append((k, k + len(f), i))
            k = key.find(f, k + 1)
    kept = {i for a, b, i in spans if not any(a2 <= a and b <= b2 and (a2, b2) != (a, b) for a2, b2, _ in spans)}
    return kept.pop() if len(kept) == 1 else None


def _json_answer(text: str) -> Any:
    t = text.strip()
    if t.startswith("```"):
        t = t[3:]
        nl = t.find("\n")
        t = t[nl + 1:] if nl >= 0 else ""
        end = t.rfind("```")
        t = t[:end] if end >= 0 else t
        t = t.strip()
    if not (t.startswith("{") and t.endswith("}")):
        return None
    try:
        obj = json.loads(t)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    keys = {str(k).casefold(): v for k, v in obj.items()}
    for k in _JSON_KEYS:
        if k in keys:
            v = keys[k]
            return v if isinstance(v, str) else json.dumps(v) if isinstance(v, (int, float)) else None
    return None


# ------------------------------------------------------------------------------------------------ reader

class _CutOff(Exception):
    """The reply ends inside a ``<think>`` block: it holds reasoning, never a final answer."""


def _prepare(text: str) -> str:
    if len(text) > MAX_CHARS:
        text = text[-MAX_CHARS:]
    text = _normalise(text)
    ends = list(_THINK_END_RE.finditer(text))
    opens = list(_THINK_OPEN_RE.finditer(text))
    if opens and (not ends or ends[-1].start() < opens[-1].start()):
        raise _CutOff("reply cut off inside <think>: no final answer")
    if ends and text[ends[-1].end():].strip():
        text = text[ends[-1].end():]
    text = _delatex(text)
    pos = 0
    m = _TURN_RE.match(text, pos)
    while m and m.end() > pos:  # "A: Let's think step by step ..." / "Q: ... A: ..."
        pos = m.end()
        m = _TURN_RE.match(text, pos)
    text = text[pos:]
    nq = _NEXT_Q_RE.search(text)
    if nq and text[:nq.start()].strip():
        text = text[:nq.start()]
    return text


def _read(text: str, opts: _Options) -> MCQRead:
    if not text.strip():
        return MCQRead(None, "empty reply")
    # 1. a JSON object with an answer key
    value = _json_answer(text)
    if value is not None:
        try:
            hit = _read_head(_unbox(value), opts, strict=True)
            if hit is None:
                hit = _read_head(_unbox(value), opts, strict=False)
        except (_Ambiguous, _Unreadable) as e:
            return MCQRead(None, f"JSON answer: {e}")
        if hit is not None:
            return MCQRead(LETTERS[hit[0]], "json")
        return MCQRead(None, f"JSON answer {value[:40]!r} is not an option")
    # 2. final-answer cues, last first
    cues = list(_CUE_RE.finditer(text))
    cues += [_Match(m.start(), m.start()) for m in _IS_CORRECT_RE.finditer(text)]
    # conclusions (every line start is one) are capped on their own, so they never crowd out the answer cues
    conclusions = [_Match(m.start(), m.end(), "conclusion") for m in _CONCLUSION_RE.finditer(text)]
    cues = cues[-MAX_CUES:] + conclusions[-MAX_CUES:]
    cues.sort(key=lambda m: m.start())
    failure = None
    for m in reversed(cues):
        token = m.group(0) if isinstance(m, re.Match) else ""
        if isinstance(m, _Match) and m.kind == "conclusion":
            line = _line_at(text, m.end())
            try:
                hit = _conclusion_head(line, opts)
            except (_Ambiguous, _Unreadable):
                hit = None
            said = m.start() != m.end() and _CONCLUSION_WORD_RE.match(text, m.start())
            if hit is None and said:
                hit = _conclusion_letter(line, opts)
            if hit is not None and not said and _in_option_list(text, m.start(), hit[0], opts):
                continue  # "Options:\n- Yes\n- No": a line of a list of options concludes nothing
            if hit is not None:
                return MCQRead(LETTERS[hit[0]], "conclusion")
            continue
        if token.lower().startswith("\\boxed"):
            seg = _unbox(_boxed(text, m.end()))
        elif token.lower() == "<answer>":
            close = text.find("</answer>", m.end(), m.end() + WINDOW)
            seg = _unbox(text[m.end(): close if close >= 0 else m.end() + WINDOW])
        else:
            seg = _cue_segment(text, m.end())
            if "\\boxed" in seg:  # "the answer is $\boxed{35}$": read the box
                continue
        try:
            hit = _read_head(seg, opts, strict=False)
        except _Ambiguous as e:
            return MCQRead(None, f"ambiguous: {e}")
        except _Unreadable as e:
            failure = failure or str(e)
            continue
        if hit is not None:
            return MCQRead(LETTERS[hit[0]], "cue")
    # 3. the last non-empty line, strictly
    lines = [ln for ln in text[-WINDOW * 4:].splitlines() if ln.strip(" \t*_`-#>")]
    if lines:
        try:
            last = lines[-1][-WINDOW:]
            turn = _TURN_RE.match(last)
            hit = _read_head(last[turn.end():] if turn else last, opts, strict=True, allow_colon=False)
        except _Ambiguous as e:
            return MCQRead(None, f"ambiguous: {e}")
        except _Unreadable as e:
            hit, failure = None, failure or str(e)
        if hit is not None and len(lines) > 1:  # "(A) Yes\n(B) No": a reply ending in the options list
            try:
                prev_line = lines[-2][-WINDOW:]
                turn = _TURN_RE.match(prev_line)
                prev = _read_head(prev_line[turn.end():] if turn else prev_line, opts, strict=True,
                                  allow_colon=False)
            except (_Ambiguous, _Unreadable):
                prev = None
            if prev is not None and prev[0] != hit[0]:
                return MCQRead(None, f"ambiguous: the last lines name {LETTERS[prev[0]]} and {LETTERS[hit[0]]}")
        if hit is not None:
            return MCQRead(LETTERS[hit[0]], "last line")
        # 3b. the last line quotes one option's words ("f has a local minimum at P and a saddle point at Q.")
        quoted = _mentioned(lines[-1][-WINDOW:], opts)
        if quoted is not None:
            return MCQRead(LETTERS[quoted], "option words")
        # 3c. navigate's Yes/No: "... you do not return to the starting point." denies the question's own clause
        denied = _denied_return(lines[-1][-WINDOW:], opts)
        if denied is not None:
            return MCQRead(LETTERS[denied], "denied clause")
    # 4. marked letters anywhere: (B), **B**
    marked = {(m.group(1) or m.group(2)) for m in _MARKED_RE.finditer(text)}
    marked = {x for x in marked if LETTERS.index(x) < opts.n}
    if len(marked) == 1:
        return MCQRead(marked.pop(), "marked letter")
    if len(marked) > 1:
        return MCQRead(None, f"ambiguous: marked letters {', '.join(sorted(marked))} and no final answer")
    return MCQRead(None, failure or "no option named")


class _Match:
    """A zero-width cue position (``B is correct``: the answer starts at the letter)."""

    def __init__(self, start: int, end: int, kind: str = "is correct"):
        self._start, self._end, self.kind = start, end, kind

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._end


def read_mcq(reply: Any, options: Sequence[str] | int) -> MCQRead:
    """The option a reply chooses (see the module docstring for the rules).

    ``options``: the option texts in letter order, or just their number when the texts are unknown (then only
    letters are read). Never raises: a non-string reply, bad options or an internal error give an unreadable
    :class:`MCQRead` whose ``reason`` says why.
    """
    try:
        if not isinstance(reply, str):
            return MCQRead(None, f"reply is {type(reply).__name__}, not text")
        invalid = invalid_reply_reason(reply)
        if invalid is not None:
            return MCQRead(None, invalid)
        if options is None or isinstance(options, (str, bytes)):
            return MCQRead(None, "options must be a list of option texts or a count")
        try:
            opts = _Options(options)
        except (TypeError, ValueError) as e:
            return MCQRead(None, f"bad options: {e}")
        try:
            text = _prepare(reply)
        except _CutOff as e:
            return MCQRead(None, str(e))
        return _read(text, opts)
    except Exception as e:  # noqa: BLE001 - model output is hostile input; a reader bug must not stop a run
        return MCQRead(None, f"reader error ({type(e).__name__})")
