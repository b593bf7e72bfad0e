"""Metrics, one pure function each, with the formula and the paper section in its docstring.

``ub_core.metrics`` is the public namespace; the functions live in one module per family of measurements:

- :mod:`.sampling` (seed 000, and seed 002's TAR): exact KS under ties, KS@N, WDZ, JSD, Lehmer codes, intervals
  (Wilson, bootstrap, cluster bootstrap),
  :func:`total_agreement_rate`.
- :mod:`.calibration` (seed 001): PM, WD, RE, reference behaviours, baselines.
- :mod:`.implicit` (seed 003): Chebyshev, Manhattan, KL, missing mass, argmax and MCQ scores, clustered summaries.
- :mod:`.odds` (seed 004): absolute error and MAE, the nearest-shot baseline, the KS statistic, per-item odds scores
  and grouped summaries.
- :mod:`.stability` (seed 002): TARr/TARa per question, BestAcc, WorstAcc, median accuracy, spread,
  :func:`stability_summary`.

Each family module defines ``__all__``; everything it exports is re-exported here.
"""

from __future__ import annotations

from . import sampling as _sampling
from .sampling import *  # noqa: F401,F403
from . import calibration as _calibration
from . import implicit as _implicit
from . import odds as _odds
from . import stability as _stability
from .calibration import *  # noqa: F401,F403
from .implicit import *  # noqa: F401,F403
from .odds import *  # noqa: F401,F403
from .stability import *  # noqa: F401,F403

__all__ = [*_sampling.__all__, *_calibration.__all__, *_implicit.__all__, *_odds.__all__, *_stability.__all__]

# Sampling-free KS (issue 18): metrics of a model's answer distribution over an enumerable support.
from . import answer_distribution as _answer_distribution  # noqa: E402
from .answer_distribution import *  # noqa: E402,F401,F403

__all__ += _answer_distribution.__all__
