"""Text-implicit scenarios: everyday stories that pin a family's distribution down exactly without naming it.

``TEXT_IMPLICIT[family](params) -> str`` returns a short scenario (a few sentences) ending in a request for one
value of one realisation. The answer-format instruction is appended elsewhere (``Problem.full_prompt``).

Every story determines the target exactly, including the scalar reduction of joint families, where a count
starts, inclusive integer ends and rate versus mean. Where a family has no everyday mechanism (extreme-value
laws, tail laws), the story states the chance of "at most x" or "more than x" as a plain formula. A few families
need integer-valued parameters for their mechanism (order statistics, stages, numbers of successes); for other
values the story falls back to another exact description.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ...distributions import fmt
from .template_registry import family_table, template

__all__ = ["TEXT_IMPLICIT", "implicit_scenario"]


def _is_int(x) -> bool:
    return float(x).is_integer()


def _ordinal(n: int) -> str:
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} and {items[1]}"
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _count_word(k: int) -> str:
    words = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return words[k] if 0 <= k < len(words) else str(k)


def _names(pool: Sequence[str], k: int, fallback: str) -> list[str]:
    if k <= len(pool):
        return list(pool[:k])
    return [f"{fallback} {i + 1}" for i in range(k)]


def _shift(loc: float, expr: str) -> str:
    """``x - loc`` as text (``x`` when loc is 0)."""
    if float(loc) == 0:
        return expr
    if loc < 0:
        return f"({expr} + {fmt(-loc)})"
    return f"({expr} - {fmt(loc)})"


# ---------------------------------------------------------------------------------------------- continuous, bounded

@template("text_implicit", "beta")
def _beta(p):
    a, b = p["a"], p["b"]
    if _is_int(a) and _is_int(b):
        total = int(a + b - 1)
        return (f"During one hour, exactly {total} shooting stars are seen; each appears at a moment that is "
                f"equally likely to be anywhere in that hour, independently of the others. Number them in the "
                f"order in which they appear. At what fraction of the hour (a number between 0 and 1) does the "
                f"{_ordinal(a)} shooting star appear?")
    return (f"Two new messaging apps launch on the same day with starting buzz scores of {fmt(a)} (the first app) "
            f"and {fmt(b)} (the second app). New users arrive one after another; each picks the first app with "
            "probability equal to its current buzz score divided by the sum of both scores, and the app that is "
            "picked gains exactly 1 point of buzz. Let this go on for an unlimited number of users. In the long "
            "run, what share of all users picked the first app (a number between 0 and 1)?")


@template("text_implicit", "arcsine")
def _arcsine(p):
    return (f"A tide gauge's reading rises and falls as a perfectly smooth sine wave, swinging between a lowest "
            f"value of {fmt(p['low'])} cm and a highest value of {fmt(p['high'])} cm and back, over and over. A "
            "reading is taken at a moment picked at random, with every point of the wave's cycle equally likely. "
            "What does the gauge show at that moment, in cm?")


@template("text_implicit", "reciprocal")
def _reciprocal(p):
    return (f"A volume knob is labelled on a logarithmic scale running from {fmt(p['a'])} at one end to "
            f"{fmt(p['b'])} at the other, so equal turns of the knob multiply the value by equal factors. A cat "
            "knocks the knob, and it comes to rest at a physical position that is equally likely to be anywhere "
            "along its full travel. What value does the knob now point to?")


@template("text_implicit", "triangular")
def _triangular(p):
    return (f"A contractor estimates how many days a renovation will take. It can never take less than "
            f"{fmt(p['left'])} days or more than {fmt(p['right'])} days. How likely each duration is rises in a "
            f"straight line from nothing at {fmt(p['left'])} days to a peak at {fmt(p['mode'])} days, then falls "
            f"in a straight line back to nothing at {fmt(p['right'])} days. How long does the renovation actually "
            "take, in days (fractions allowed)?")


@template("text_implicit", "truncated_normal")
def _truncated_normal(p):
    return (f"A marksman's horizontal offset from the centre line (in mm, negative meaning left) follows a bell "
            f"curve with mean {fmt(p['loc'])} mm and standard deviation {fmt(p['scale'])} mm. The target board "
            f"only reaches from {fmt(p['low'])} mm to {fmt(p['high'])} mm; shots landing outside that range miss "
            "the board and are not recorded. Pick one recorded shot at random: what is its horizontal offset, "
            "in mm?")


@template("text_implicit", "uniform")
def _uniform(p):
    return (f"A robotic arm drops a part onto a straight conveyor belt. Where it lands, measured in cm from a "
            f"reference mark (negative meaning before the mark), can be any point from {fmt(p['low'])} to "
            f"{fmt(p['high'])}, and every stretch of belt of the same length inside that range is equally likely "
            "to catch it; it never lands outside the range. Where does the next part land, in cm?")


# ---------------------------------------------------------------------------------------------- semi-infinite

@template("text_implicit", "erlang")
def _erlang(p):
    k = int(p["k"])
    return (f"Calls reach a help desk at completely random moments: calls come independently of one another, "
            f"at a steady average of one call every {fmt(p['scale'])} minutes, and the chance of a call in any "
            "short instant never depends on what happened before. Starting a stopwatch now, how many minutes "
            f"pass until the {_ordinal(k)} call arrives?")


@template("text_implicit", "f")
def _f(p):
    return (f"Two sensors, A and B, each output pure noise: every reading is an independent bell-curve number "
            "with mean 0, and all readings of both sensors have the same standard deviation. An engineer takes "
            f"{fmt(p['dfnum'])} readings from sensor A and {fmt(p['dfden'])} readings from sensor B, squares "
            "every reading, and averages the squares separately for each sensor. What is sensor A's average "
            "divided by sensor B's average?")


@template("text_implicit", "frechet")
def _frechet(p):
    loc, c, scale = p["loc"], p["c"], p["scale"]
    above = fmt(loc)
    return (f"Hydrologists find that the highest flood level of the year at a river gauge, in metres, is always "
            f"above {above}, and that the chance it stays at or below any level x (x > {above}) is "
            f"exp(-({fmt(scale)} / {_shift(loc, 'x')})^{fmt(c)}). What is this year's highest flood level, in "
            "metres?")


@template("text_implicit", "gamma")
def _gamma(p):
    shape, scale = p["shape"], p["scale"]
    if _is_int(shape):
        return (f"A detector near a weak radioactive source clicks at random, independent moments, on average "
                f"once every {fmt(scale)} seconds; the chance of a click in any short instant is always the same, "
                "no matter when the last click came. Starting now, how many seconds pass until the "
                f"{_ordinal(int(shape))} click?")
    if _is_int(2 * shape):
        m = int(2 * shape)
        parts = ("3 independent parts (east-west, north-south and up-down)" if m == 3
                 else f"{m} independent parts")
        return (f"A hovering drone's position error has {parts}, each following a bell curve with mean 0 m and "
                f"standard deviation √{fmt(scale / 2)} m (so each part's average square is {fmt(scale / 2)} m²). "
                "Add up the squares of all the parts: what is this total squared error, in m², at one moment?")
    return (f"A machine's time to repair, in hours, is always positive, and how likely each time x is, is "
            f"proportional to x^{fmt(shape - 1)} × exp(-x / {fmt(scale)}). How long does the next repair take, "
            "in hours?")


@template("text_implicit", "pareto")
def _pareto(p):
    return (f"In a certain region, every company has annual revenue of at least {fmt(p['scale'])} million "
            f"dollars, and the share of companies earning more than x million is ({fmt(p['scale'])} / x)^"
            f"{fmt(p['a'])} for every x of at least {fmt(p['scale'])}. Pick one company at random: what is its "
            "revenue, in millions of dollars?")


@template("text_implicit", "rayleigh")
def _rayleigh(p):
    return (f"An archer's arrows miss the bullseye sideways and up-down by independent amounts, each following a "
            f"bell curve centred on 0 with standard deviation {fmt(p['scale'])} cm. How far from the bullseye, "
            "in a straight line, does the next arrow land, in cm?")


@template("text_implicit", "weibull")
def _weibull(p):
    return (f"For a type of ball bearing, the fraction still running after t thousand hours of use is "
            f"exp(-(t / {fmt(p['scale'])})^{fmt(p['a'])}), for every t of at least 0. Pick one new bearing: how "
            "many thousand hours does it last?")


@template("text_implicit", "chi_squared")
def _chi_squared(p):
    df = p["df"]
    if _is_int(df):
        return (f"A laboratory runs {fmt(df)} independent calibration checks. Each check's error follows a bell "
                f"curve with mean 0 and standard deviation 1 unit. Its alarm score is the sum of the squared "
                f"errors of all {fmt(df)} checks. What is the alarm score on one run?")
    return (f"A laboratory's alarm score is always positive, and how likely each score x is, is proportional to "
            f"x^{fmt(df / 2 - 1)} × exp(-x / 2). What is the alarm score on one run?")


@template("text_implicit", "exponential")
def _exponential(p):
    return (f"An electronic fuse does not wear out: however long it has already worked, its chance of failing "
            f"in the next hour is always the same. On average such a fuse lasts {fmt(p['scale'])} hours. A new "
            "fuse is installed: how many hours does it last?")


@template("text_implicit", "inverse_gaussian")
def _inverse_gaussian(p):
    mean, lam = p["mean"], p["scale"]
    var = mean * mean / lam
    return (f"A dust speck is carried towards a sensor by a steady air current at exactly 1 mm per second, while "
            "random jostling makes it wander: over any stretch of t seconds the jostling alone moves it forwards "
            f"or backwards by a bell-curve amount with mean 0 and variance {fmt(var)} × t mm², independently for "
            f"separate stretches of time. The sensor is {fmt(mean)} mm ahead of the speck's starting point. How "
            "many seconds pass until the speck first reaches the sensor?")


@template("text_implicit", "log_normal")
def _log_normal(p):
    return (f"For grains of sand on a beach, the natural logarithm of a grain's diameter (diameter in "
            f"micrometres) follows a bell curve with mean {fmt(p['mean'])} and standard deviation "
            f"{fmt(p['sigma'])}. Pick one grain at random: what is its diameter in micrometres (the diameter "
            "itself, not its logarithm)?")


# ---------------------------------------------------------------------------------------------- real line

@template("text_implicit", "gumbel")
def _gumbel(p):
    return (f"An engineer studies the strongest wind gust of each year at a bridge site. The chance that a "
            f"year's strongest gust is at most x (in m/s) is exp(-exp(-{_shift(p['loc'], 'x')} / "
            f"{fmt(p['scale'])})) for every x. What is the strongest gust next year, in m/s?")


@template("text_implicit", "laplace")
def _laplace(p):
    return (f"A delivery robot tries to stop at the {fmt(p['loc'])} m mark of a long corridor. It overshoots or "
            f"stops short with equal chance, and, independently of the direction, the chance that it misses by "
            f"more than d metres is exp(-d / {fmt(p['scale'])}) for every d of at least 0. Where along the corridor "
            "does it stop, in metres?")


@template("text_implicit", "students_t")
def _students_t(p):
    df, loc, scale = p["df"], p["loc"], p["scale"]
    score = "Z / √A" if scale == 1 else f"{fmt(scale)} × Z / √A"
    if loc != 0:
        score = f"{fmt(loc)} + {score}"
    return (f"A testing rig computes a score in three steps. First it takes one reading Z that follows a bell "
            f"curve with mean 0 and standard deviation 1. Then, independently, it takes {fmt(df)} more such "
            f"readings and lets A be the average of their squares. The score is {score}. What score does the rig "
            "report on one run?")


@template("text_implicit", "logistic")
def _logistic(p):
    return (f"In an online game, the chance that a newcomer's hidden skill rating is at most x equals "
            f"1 / (1 + exp(-{_shift(p['loc'], 'x')} / {fmt(p['scale'])})) for every x. A new player joins: "
            "what is their hidden skill rating?")


@template("text_implicit", "normal")
def _normal(p):
    return (f"A trader's daily profit or loss, in dollars, follows a bell curve centred on {fmt(p['loc'])} "
            f"dollars with standard deviation {fmt(p['scale'])} dollars, independently from day to day. What is "
            "the result of one trading day, in dollars?")


# ---------------------------------------------------------------------------------------------- discrete, finite

@template("text_implicit", "bernoulli")
def _bernoulli(p):
    return (f"A basketball player makes each free throw with chance {fmt(p['p'])}, independently of her other "
            "shots. She takes one free throw. Report 1 if it goes in and 0 if it misses.")


@template("text_implicit", "poisson_binomial")
def _poisson_binomial(p):
    ps = p["p"]
    k = len(ps)
    return (f"A hospital has {k} independent backup generators. During a storm, their chances of keeping "
            f"running are {_and([fmt(x) for x in ps])} respectively, independently of one another. How many of "
            f"the {k} generators keep running through the storm?")


@template("text_implicit", "beta_binomial")
def _beta_binomial(p):
    n = int(p["n"])
    return (f"Two food trucks, A and B, park side by side with starting popularity scores of {fmt(p['a'])} (A) "
            f"and {fmt(p['b'])} (B). {n} customers arrive one after another; each picks truck A with probability "
            "A's current score divided by the sum of both scores (otherwise truck B), and after each choice the "
            f"chosen truck's score goes up by exactly 1. How many of the {n} customers pick truck A?")


@template("text_implicit", "binomial")
def _binomial(p):
    n = int(p["n"])
    return (f"A gardener sows {n} seeds; each seed sprouts with chance {fmt(p['p'])}, independently of the "
            f"others. How many of the {n} seeds sprout?")


@template("text_implicit", "discrete_uniform")
def _discrete_uniform(p):
    lo, hi = int(p["low"]), int(p["high"])
    return (f"In a board game, an event card awards a whole-number bonus picked completely at random from "
            f"{lo} up to {hi}, both ends included, with every whole number in that range equally likely. What "
            "bonus does the next card award?")


@template("text_implicit", "hypergeometric")
def _hypergeometric(p):
    good, bad, k = int(p["ngood"]), int(p["nbad"]), int(p["nsample"])
    return (f"A crate holds {good + bad} apples, exactly {good} of which are bruised. An inspector takes {k} "
            "apples at random from the crate, all at once, without putting any back. How many bruised apples "
            "are among the ones she took?")


# ---------------------------------------------------------------------------------------------- discrete, infinite

@template("text_implicit", "poisson")
def _poisson(p):
    return (f"Emails reach a support inbox at random, independent moments, at a steady average rate of "
            f"{fmt(p['lam'])} per minute; earlier arrivals never make later ones more or less likely. How many "
            "emails arrive during one particular minute?")


@template("text_implicit", "skellam")
def _skellam(p):
    return (f"At a bike-sharing dock that never runs out of bikes or space, riders return bikes at random, "
            f"independent moments at a steady average of {fmt(p['mu1'])} returns per day, and, independently of "
            f"the returns, other riders take bikes away at random moments at a steady average of {fmt(p['mu2'])} "
            "pickups per day. What is the dock's net change in bikes over one day (returns minus pickups)?")


@template("text_implicit", "compound_poisson")
def _compound_poisson(p):
    if "jump" in p:
        from ... import distributions as D

        return (f"Claims reach a small insurer at random, independent moments, at a steady average of "
                f"{fmt(p['lam'])} per day. The size of each claim, in thousands, is independent of everything else "
                f"and follows {D.describe(p['jump']['family'], p['jump']['params'])}. What is the total claimed "
                "on one particular day, in thousands (0 if no claim arrives)?")
    return (f"Shoppers enter a bakery at random, independent moments, at a steady average of {fmt(p['lam'])} "
            f"per hour. Each shopper takes loaves one at a time: after each loaf they stop with chance "
            f"{fmt(p['p'])}, otherwise they take another, so everyone buys at least one loaf. How many loaves "
            "are sold during one particular hour (0 if nobody comes)?")


@template("text_implicit", "geometric")
def _geometric(p):
    return (f"A darts player throws at the bullseye again and again until she hits it; each throw hits with "
            f"chance {fmt(p['p'])}, independently of the others. How many throws does she make, counting the "
            "throw that finally hits?")


@template("text_implicit", "negative_binomial")
def _negative_binomial(p):
    n, q = p["n"], p["p"]
    if _is_int(n):
        return (f"A telemarketer keeps making calls until she has closed {int(n)} sales; each call ends in a "
                f"sale with chance {fmt(q)}, independently of the others. How many of her calls ended without "
                "a sale by the time she stops?")
    return (f"Each page of a manuscript has its own hidden typo rate R, and given R the typos on the page turn "
            f"up at random, independently, R per page on average. Across pages, how likely each rate r is, is "
            f"proportional to r^{fmt(n - 1)} × exp(-r × {fmt(q)} / {fmt(1 - q)}). How many typos are on a page "
            "picked at random?")


# ---------------------------------------------------------------------------------------------- joint, reduced

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@template("text_implicit", "dirichlet")
def _dirichlet(p):
    alpha, c = p["alpha"], p["component"]
    k = len(alpha)
    names = [_LETTERS[i] if i < 26 else str(i + 1) for i in range(k)]
    scores = _and([f"{fmt(a)} ({nm})" for a, nm in zip(alpha, names)])
    return (f"{_count_word(k).capitalize()} crowdfunding campaigns, {_and(names)}, "
            "launch together with starting momentum scores of "
            f"{scores}. Backers arrive one after another; each supports exactly one campaign, picking each "
            "campaign with probability proportional to its current momentum score, and the supported campaign's "
            "score then grows by exactly 1. Let this go on for an unlimited number of backers. In the long run, "
            f"what share of all backers supported campaign {names[c]} (a number between 0 and 1)?")


_FLAVOURS = ("chocolate", "vanilla", "strawberry", "pistachio", "mango", "coffee", "lemon", "mint")


@template("text_implicit", "multinomial")
def _multinomial(p):
    pv, c, n = p["pvals"], p["component"], int(p["n"])
    names = _names(_FLAVOURS, len(pv), "flavour")
    picks = _and([f"{nm} with chance {fmt(q)}" for nm, q in zip(names, pv)])
    return (f"An ice-cream stand sells {len(pv)} flavours. Each of today's {n} customers buys exactly one scoop "
            f"and, independently of everyone else, picks {picks}. How many of the {n} customers pick "
            f"{names[c]}?")


def _pairs(m, word: str) -> str:
    """The off-diagonal entries of a symmetric matrix as text."""
    d = len(m)
    if d == 2:
        return f"the covariance between {word}s 1 and 2 is {fmt(m[0][1])}"
    parts = [f"{word}s {i + 1} and {j + 1}: {fmt(m[i][j])}" for i in range(d) for j in range(i + 1, d)]
    return "the covariances between pairs are " + "; ".join(parts)


@template("text_implicit", "multivariate_normal")
def _multivariate_normal(p):
    mean, cov = p["mean"], p["cov"]
    d = len(mean)
    ask = ("the total profit of all the assets together" if p["reduce"] == "sum"
           else f"the profit of asset {p['component'] + 1}")
    return (f"An investor holds {d} assets whose one-month profits, in dollars, are jointly bell-shaped: every "
            f"weighted sum of them follows a bell curve. Their averages are {_and([fmt(x) for x in mean])} "
            f"dollars, their variances are {_and([fmt(cov[i][i]) for i in range(d)])}, and "
            f"{_pairs(cov, 'asset')}. What is {ask} for one month, in dollars?")


@template("text_implicit", "multivariate_t")
def _multivariate_t(p):
    loc, shape, df = p["loc"], p["shape"], p["df"]
    d = len(loc)
    ask = ("the sum of all the moves" if p["reduce"] == "sum"
           else f"the move of currency {p['component'] + 1}")
    shocks = _and([f"S{i + 1}" for i in range(d)])
    levels = _and([f"L{i + 1} = {fmt(x)}" for i, x in enumerate(loc)])
    return (f"A model of {_count_word(d)} currencies works in three steps. First, draw shocks {shocks} that are "
            f"jointly bell-shaped (every weighted sum of them follows a bell curve), each with mean 0, with "
            f"variances {_and([fmt(shape[i][i]) for i in range(d)])}, where {_pairs(shape, 'shock')}. "
            f"Independently, let C be the average of the squares of {fmt(df)} independent bell-curve numbers "
            f"with mean 0 and standard deviation 1. Currency i then moves by Li + Si / √C, with levels "
            f"{levels}. What is {ask} on one day?")


_DEFECTS = ("scratched", "dented", "cracked", "discoloured", "warped", "chipped", "bent", "stained")


@template("text_implicit", "negative_multinomial")
def _negative_multinomial(p):
    n, pv, c = p["n"], p["pvals"], p["component"]
    kinds = _names(_DEFECTS, len(pv) - 1, "defect type")
    chances = _and([f"{kd} with chance {fmt(q)}" for kd, q in zip(kinds, pv[1:])])
    if _is_int(n):
        return (f"An inspector checks items from a production line one at a time. Each item, independently, is "
                f"fine with chance {fmt(pv[0])}, or else {chances}. She stops as soon as she has seen "
                f"{int(n)} fine items. How many {kinds[c]} items has she seen by then?")
    # a fractional number of stops has no trial story; the reported count alone is a gamma-mixed arrival count
    return _negative_binomial({"n": n, "p": pv[0] / (pv[0] + pv[c + 1])})


# ---------------------------------------------------------------------------------------------- mixed, categorical

@template("text_implicit", "rectified_gaussian")
def _rectified_gaussian(p):
    return (f"A solar panel's net energy meter tracks an underlying value that follows a bell curve with mean "
            f"{fmt(p['loc'])} kWh and standard deviation {fmt(p['scale'])} kWh, but the meter cannot show "
            "anything below zero: whenever the underlying value is negative it records exactly 0. What does the "
            "meter record for one day, in kWh?")


@template("text_implicit", "categorical")
def _categorical(p):
    labels, pv = p["labels"], p["pvals"]
    quoted = [f"'{lab}'" for lab in labels]
    if max(pv) - min(pv) < 1e-12:
        wheel = (f"is painted with {len(labels)} equal sectors labelled {_and(quoted)}, so when spun it stops on "
                 f"each label with the same chance, {fmt(pv[0])}")
    else:
        wheel = ("is painted with sectors of different sizes; when spun, it stops on "
                 + _and([f"{q} with chance {fmt(x)}" for q, x in zip(quoted, pv)]))
    return f"A prize wheel at a fair {wheel}. The wheel is spun once. Which label does it stop on?"


@template("text_implicit", "rayleigh_mixture")
def _rayleigh_mixture(p):
    from ... import distributions as D

    kp = p["kernel_params"]

    def aff(a):
        return D._affine_text(a).replace("R", "W")

    if p["kernel"] == "normal":
        reading = f"is a bell-curve value centred on {aff(kp['loc'])} with standard deviation {aff(kp['scale'])}"
    elif p["kernel"] == "exponential":
        reading = f"exceeds any x of at least 0 with chance exp(-x / ({aff(kp['scale'])}))"
    elif _is_int(kp["shape"]["const"]):
        k = int(kp["shape"]["const"])
        reading = (f"is the total of {k} independent waits, each longer than any x of at least 0 with chance "
                   f"exp(-x / ({aff(kp['scale'])}))")
    else:
        reading = (f"has density proportional to x^{fmt(kp['shape']['const'] - 1)} exp(-x / ({aff(kp['scale'])})) "
                   "for x > 0")
    return ("At a coastal station the wind speed W at a random moment behaves like the distance from the origin of "
            f"a point whose two coordinates are independent bell curves centred on 0 with standard deviation "
            f"{fmt(p['sigma'])}. Given the wind speed W, a sensor's reading {reading}. One moment is picked at "
            "random: what does the sensor read?")


@template("text_implicit", "empirical_discrete")
def _empirical_discrete(p):
    sectors = _and([f"{fmt(v)} with chance {fmt(q)}" for v, q in zip(p["values"], p["pvals"])])
    return (f"A board game's spinner stops on a number: {sectors}, independently of earlier spins. The spinner is "
            "spun once. Which number does it show?")


TEXT_IMPLICIT: dict[str, Callable[[dict], str]] = family_table("text_implicit")


def implicit_scenario(family: str, params: dict) -> str:
    """The text-implicit scenario of ``family`` with ``params``."""
    return TEXT_IMPLICIT[family](params)
