"""The numeric calibration bank (the numeric-calibration paper, section 3.4): ``colors``, ``wordproblems`` and
``distributions``.

Design notes: docs/design/calibration-bank.md.
"""

from __future__ import annotations

import gc
from functools import lru_cache
from typing import Iterator

from .option_item import OptionItem

__all__ = ["BANK", "BANK_VERSION", "CATEGORIES", "SCALES", "COLORS", "COLOR_TEMPLATES", "WORDPROBLEM_TEMPLATES",
           "DISTRIBUTION_TEMPLATES", "DISTRIBUTION_ENDS", "INTERVALS", "calibration_items", "find_calibration_item"]

BANK = "calibration"
# Bump when any prompt, number or option changes.
BANK_VERSION = "2"  # 2: model runs leave the equal-count items out as the baselines do

CATEGORIES = ("colors", "wordproblems", "distributions")
SIZES = ("subset", "full")

# The three numeric scales (the numeric-calibration paper, section 3.4). The sampled scales were drawn once with
# sorted(numpy.random.default_rng(1).choice(range(lo, hi + 1), 10, replace=False)) for (10, 100), then (100, 999)
# on the same generator. They are frozen here so that ids never depend on the numpy version.
SCALES: dict[str, tuple[int, ...]] = {
    "units": tuple(range(1, 11)),
    "tens": (12, 22, 32, 38, 48, 52, 73, 82, 90, 94),
    "hundreds": (124, 211, 395, 506, 581, 772, 808, 832, 849, 872),
}

# 11 colours give 55 unordered and 110 ordered pairs.
COLORS = ("red", "blue", "green", "yellow", "white", "black", "purple", "orange", "pink", "brown", "gray")

_PLURALS = {"candy": "candies", "puppy": "puppies", "peach": "peaches", "mango": "mangoes", "bus": "buses"}


def _plural(word: str) -> str:
    return _PLURALS.get(word, word + "s")


def _by_count(word: str, n: int) -> str:
    return word if n == 1 else _plural(word)


# Colour templates. Fields: {n1} {n2} (counts), {o1} {o2} (colours), {u1} {u2} (the unit noun, singular or plural
# by count). Each prompt stops before the colour word.
COLOR_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("marble", "A bag holds {n1} {o1} {u1} and {n2} {o2} {u2}. Without looking, Sam pulls out one marble. "
               "Its color is"),
    ("sock", "In a dark drawer there are {n1} {o1} {u1} and {n2} {o2} {u2}. I grab one sock at random, and it "
             "turns out to be"),
    ("candy", "A jar contains {n1} {o1} {u1} and {n2} {o2} {u2}. A child reaches in with closed eyes and takes "
              "one candy. The candy is"),
    ("car", "The lot has {n1} {o1} {u1} and {n2} {o2} {u2} parked in it. One of these cars, chosen at random, "
            "drives away. The car that left was"),
    ("ball", "An urn contains {n1} {o1} {u1} and {n2} {o2} {u2}. A ball is drawn uniformly at random, and its "
             "color is"),
)

# Word-problem templates: (unit noun or None, text, unordered option pairs). Extra fields: {p1} {p2} are the
# options themselves in singular or plural by count. Option words are distinct across templates and from the
# colours, so an option pair names one cluster.
WORDPROBLEM_TEMPLATES: tuple[tuple[str | None, str, tuple[tuple[str, str], ...]], ...] = (
    ("tree", "A grove holds {n1} {o1} {u1} and {n2} {o2} {u2}, all about equally tall and on level ground. During "
             "a storm, lightning struck one tree. The species of the struck tree was",
     (("spruce", "cedar"), ("oak", "maple"), ("pine", "birch"), ("elm", "willow"), ("poplar", "beech"))),
    (None, "At a conference, {n1} {p1} and {n2} {p2} each dropped one ticket into a raffle drum. A single ticket "
           "was drawn. The occupation of the winner was listed as",
     (("nurse", "doctor"), ("teacher", "lawyer"), ("chef", "pilot"), ("farmer", "banker"),
      ("plumber", "architect"), ("dentist", "engineer"))),
    ("puppy", "An animal shelter houses {n1} {o1} {u1} and {n2} {o2} {u2}. A family adopted one of them, chosen "
              "at random. The breed of the adopted puppy is",
     (("beagle", "poodle"), ("boxer", "collie"), ("terrier", "husky"), ("pug", "dachshund"),
      ("labrador", "bulldog"))),
    (None, "A basket holds {n1} {p1} and {n2} {p2}. With her eyes closed, Maya takes one piece of fruit and bites "
           "into the",
     (("apple", "pear"), ("banana", "plum"), ("lemon", "lime"), ("peach", "mango"), ("apricot", "kiwi"))),
    ("resident", "In a vote on the town mascot, {n1} {u1} picked the {o1} and {n2} {u2} picked the {o2}. A "
                 "reporter stopped one of these voters at random. That voter had picked the",
     (("fox", "owl"), ("bear", "wolf"), ("eagle", "lion"), ("tiger", "hawk"), ("deer", "rabbit"),
      ("otter", "beaver"), ("falcon", "bison"))),
    ("novel", "A shelf holds {n1} {o1} {u1} and {n2} {o2} {u2}. Without looking, Leo pulls one novel off the "
              "shelf. The genre of that novel is",
     (("mystery", "romance"), ("fantasy", "horror"), ("western", "thriller"), ("comedy", "tragedy"))),
    (None, "A depot has {n1} {p1} and {n2} {p2} ready to go. The dispatcher sends out one vehicle, picked at "
           "random. The vehicle sent out is the",
     (("truck", "van"), ("bus", "taxi"), ("tractor", "scooter"), ("motorcycle", "bicycle"))),
    ("cup", "A cafe served {n1} {u1} of {o1} and {n2} {u2} of {o2} this morning. One cup was left behind on a "
            "table, every cup being equally likely. The forgotten cup held",
     (("coffee", "tea"), ("cocoa", "juice"), ("milk", "lemonade"), ("cider", "soda"), ("espresso", "latte"))),
    ("player", "The school band has {n1} {o1} {u1} and {n2} {o2} {u2}. The conductor calls on one of them at "
               "random. The instrument of the chosen player is the",
     (("piano", "violin"), ("guitar", "drum"), ("flute", "trumpet"), ("cello", "clarinet"), ("harp", "saxophone"),
      ("tuba", "oboe"))),
    ("fan", "A games club has {n1} {o1} {u1} and {n2} {o2} {u2}, and nobody follows both. A lottery picks one of "
            "them to win a trip. The winner is a fan of",
     (("tennis", "golf"), ("soccer", "hockey"), ("rugby", "cricket"), ("baseball", "volleyball"),
      ("chess", "bridge"), ("badminton", "squash"), ("poker", "checkers"), ("softball", "lacrosse"),
      ("bowling", "curling"))),
)

# Distribution templates. Fields: {lo} {hi} (the interval ends as written) and {lo_end} {hi_end} ("inclusive" or
# "exclusive"). Each prompt stops before the number.
DISTRIBUTION_TEMPLATES: tuple[str, ...] = (
    "I drew a whole number uniformly at random from {lo} ({lo_end}) to {hi} ({hi_end}). The number I drew was",
    "A random integer generator gives every whole number between {lo} ({lo_end}) and {hi} ({hi_end}) the same "
    "chance. This time it returned",
    "Pick an integer uniformly from the range that starts at {lo}, {lo_end}, and ends at {hi}, {hi_end}. Picked "
    "integer:",
    "A drum holds one ticket for each whole number from {lo} ({lo_end}) to {hi} ({hi_end}). One ticket is drawn "
    "blindly, and it shows the number",
    "Uniform integer draw, range {lo} {lo_end} to {hi} {hi_end}. Result:",
)

# End conventions as (lower inclusive, upper inclusive), with their id codes.
DISTRIBUTION_ENDS: tuple[tuple[bool, bool], ...] = ((True, True), (True, False), (False, True))
_END_CODE = {True: "i", False: "e"}
_END_WORD = {True: "inclusive", False: "exclusive"}


def _intervals() -> tuple[tuple[int, int], ...]:
    """The 320 intervals (lo, hi). Lengths cycle through 1..9 (lengths 1-5 appear 36 times, 6-9 appear 35 times).
    The lower end walks 10..990 with stride 367; 367 is coprime to 981, so the 320 lower ends are distinct and so
    are the intervals. Integer arithmetic only, so the list never changes."""
    return tuple((10 + (i * 367) % 981, 10 + (i * 367) % 981 + 1 + i % 9) for i in range(320))


INTERVALS: tuple[tuple[int, int], ...] = _intervals()


def _cluster(a: str, b: str) -> str:
    """The option pair, unordered: ``red|blue`` and ``blue|red`` both give ``blue|red``."""
    return "|".join(sorted((a, b)))


def _pair_item(category: str, t: int, scale: str, n1: int, n2: int, o1: str, o2: str, prompt: str,
               in_subset: bool, cluster: str) -> OptionItem:
    total = n1 + n2
    higher = o1 if n1 > n2 else o2 if n2 > n1 else None
    lower = o2 if n1 > n2 else o1 if n2 > n1 else None
    return OptionItem(
        id=f"cal-{category}-t{t}-{scale}-{n1}-{n2}-{o1}-{o2}", bank=BANK, category=category,
        family="categorical", params={"labels": [o1, o2], "counts": [n1, n2]}, prompt=prompt, options=(o1, o2),
        probabilities=(n1 / total, n2 / total), cluster=cluster,
        metadata={"template": f"t{t}", "scale": scale, "counts": [n1, n2], "order": [o1, o2], "first": o1,
                  "second": o2, "higher": higher, "lower": lower, "in_subset": in_subset})


def _scale_pairs(scale: str) -> list[tuple[int, int]]:
    """The 100 ordered number pairs of a scale; index ``10 * i + k`` is (numbers[i], numbers[k])."""
    nums = SCALES[scale]
    return [(a, b) for a in nums for b in nums]


def _transpose(j: int) -> int:
    return 10 * (j % 10) + j // 10


def _colors(subset: bool) -> Iterator[OptionItem]:
    unordered = [(COLORS[i], COLORS[k]) for i in range(len(COLORS)) for k in range(i + 1, len(COLORS))]
    for s, scale in enumerate(SCALES):
        pairs = _scale_pairs(scale)
        for t, (unit, text) in enumerate(COLOR_TEMPLATES):
            unit_by_n = {n: _by_count(unit, n) for n in SCALES[scale]}
            for u, (a, b) in enumerate(unordered):
                # Subset: number pair j for (a, b), its transpose for (b, a). The cell index u*5+t runs over
                # 0..274 and 37 is invertible mod 100, so each scale's 100 number pairs all appear; the stride
                # scatters them so that each colour pair sees both "first higher" and "second higher".
                pick = ((u * len(COLOR_TEMPLATES) + t) * 37 + 41 * s) % 100
                cluster = _cluster(a, b)
                for o1, o2, chosen in ((a, b, pick), (b, a, _transpose(pick))):
                    for j, (n1, n2) in enumerate(pairs):
                        selected = j == chosen
                        if subset and not selected:
                            continue
                        prompt = text.format(n1=n1, n2=n2, o1=o1, o2=o2, u1=unit_by_n[n1], u2=unit_by_n[n2])
                        yield _pair_item("colors", t, scale, n1, n2, o1, o2, prompt, selected, cluster)


_WP_PER_CELL = 3  # number pairs per (unordered option pair, scale) in the subset


def _wordproblems(subset: bool) -> Iterator[OptionItem]:
    u = 0  # running index of the unordered pair over all templates
    for t, (unit, text, option_pairs) in enumerate(WORDPROBLEM_TEMPLATES):
        for a, b in option_pairs:
            for s, scale in enumerate(SCALES):
                pairs = _scale_pairs(scale)
                # Consecutive cell indices walk the 100 number pairs with the invertible stride 37, so the three
                # picks are distinct and scattered across first-higher, second-higher and equal pairs.
                picks = {((u * len(SCALES) + s) * _WP_PER_CELL + k) * 37 % 100 for k in range(_WP_PER_CELL)}
                cluster = _cluster(a, b)
                for o1, o2, chosen in ((a, b, picks), (b, a, {_transpose(j) for j in picks})):
                    for j, (n1, n2) in enumerate(pairs):
                        selected = j in chosen
                        if subset and not selected:
                            continue
                        fields = dict(n1=n1, n2=n2, o1=o1, o2=o2, p1=_by_count(o1, n1), p2=_by_count(o2, n2))
                        if unit is not None:
                            fields.update(u1=_by_count(unit, n1), u2=_by_count(unit, n2))
                        yield _pair_item("wordproblems", t, scale, n1, n2, o1, o2, text.format(**fields), selected,
                                         cluster)
            u += 1


def _distributions(subset: bool) -> Iterator[OptionItem]:
    for i, (lo, hi) in enumerate(INTERVALS):
        for e, (lo_in, hi_in) in enumerate(DISTRIBUTION_ENDS):
            first, last = lo if lo_in else lo + 1, hi if hi_in else hi - 1
            k = last - first + 1
            if k < 2:
                continue
            values = tuple(str(v) for v in range(first, last + 1))
            ends = _END_CODE[lo_in] + _END_CODE[hi_in]
            chosen = (i + e) % len(DISTRIBUTION_TEMPLATES)
            for t, text in enumerate(DISTRIBUTION_TEMPLATES):
                selected = t == chosen
                if subset and not selected:
                    continue
                prompt = text.format(lo=lo, hi=hi, lo_end=_END_WORD[lo_in], hi_end=_END_WORD[hi_in])
                yield OptionItem(
                    id=f"cal-distributions-t{t}-{lo}-{hi}-{ends}", bank=BANK, category="distributions",
                    family="uniform_integer", params={"low": first, "high": last}, prompt=prompt, options=values,
                    probabilities=(1.0 / k,) * k, cluster=f"{lo}-{hi}",
                    metadata={"template": f"t{t}", "interval": [lo, hi], "low_inclusive": lo_in,
                              "high_inclusive": hi_in, "values": [first, last], "order": list(values),
                              "first": values[0], "second": values[1], "higher": None, "lower": None,
                              "in_subset": selected})


@lru_cache(maxsize=None)
def calibration_items(size: str = "subset") -> tuple[OptionItem, ...]:
    """The calibration bank: ``size="subset"`` (3,546 stratified items, the default) or ``"full"`` (203,040).

    Order: colors, wordproblems, distributions; deterministic. Cached per edition.
    """
    if size not in SIZES:
        raise ValueError(f"unknown calibration bank size {size!r}; expected one of {', '.join(SIZES)}")
    subset = size == "subset"
    # The full edition makes about a million small containers. The cyclic collector would rescan the growing heap
    # many times over, which takes about 40% of the time. None of these objects form cycles, so pause it.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return (*_colors(subset), *_wordproblems(subset), *_distributions(subset))
    finally:
        if was_enabled:
            gc.enable()


@lru_cache(maxsize=1)
def _by_prompt() -> dict[str, OptionItem]:
    return {item.prompt: item for item in calibration_items("full")}


def find_calibration_item(text: str) -> OptionItem | None:
    """The item whose prompt is ``text``, or is its last paragraph (a prompt wrapped in instructions). ``None``
    when no item matches. The offline oracle uses this lookup, so every prompt in the bank is unique."""
    table = _by_prompt()
    stripped = text.strip()
    hit = table.get(stripped)
    if hit is not None:
        return hit
    pos = stripped.rfind("\n")
    while pos >= 0:
        hit = table.get(stripped[pos + 1:].strip())
        if hit is not None:
            return hit
        pos = stripped.rfind("\n", 0, pos)
    return None
