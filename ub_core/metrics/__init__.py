"""Metrics, one pure function each, with the formula and the paper's section in its docstring.

``ub_core.metrics`` is the public namespace; the functions live in one module per family of measurements:

- :mod:`.inputs`: checked metric inputs and the shared KS@N constants (``DEFAULT_NS``, ``KS_METHODS``, ``SUPPORTS``).
- :mod:`.ks_exact` (UnpredictaBench): the exact two-sample KS test under ties and its Monte-Carlo reference.
- :mod:`.sampling` (UnpredictaBench): KS@N, WDZ, JSD.
- :mod:`.lehmer_codes` (UnpredictaBench): Lehmer codes and Z1.
- :mod:`.intervals`: Wilson intervals, t intervals of means on (clustered) standard errors, the bootstrap, summaries.
- :mod:`.answer_distribution` (UnpredictaBench, sampling-free): KS distance and KS@N pass probability of a model's
  answer distribution read from log-probabilities.
- :mod:`.calibration` (the numeric-calibration paper): PM, WD, RE, reference behaviours, baselines.
- :mod:`.implicit` (the implicit-reasoning paper): Chebyshev, Manhattan, KL, missing mass, argmax and MCQ scores,
  clustered summaries.
- :mod:`.odds` (the odds paper): absolute error and MAE, the nearest-shot baseline, the KS statistic, per-item odds
  scores and grouped summaries.
- :mod:`.stability` (the non-determinism paper): :func:`total_agreement_rate`, TARr/TARa per question, BestAcc,
  WorstAcc, median accuracy, spread,
  :func:`stability_summary`.

Each family module defines ``__all__``; everything it exports is re-exported here.
"""

from __future__ import annotations

from . import intervals as _intervals
from . import ks_exact as _ks_exact
from . import lehmer_codes as _lehmer
from . import inputs as _inputs
from . import sampling as _sampling
from .inputs import *  # noqa: F401,F403
from .intervals import *  # noqa: F401,F403
from .ks_exact import *  # noqa: F401,F403
from .lehmer_codes import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from . import calibration as _calibration
from . import implicit as _implicit
from . import odds as _odds
from . import stability as _stability
from .calibration import *  # noqa: F401,F403
from .implicit import *  # noqa: F401,F403
from .odds import *  # noqa: F401,F403
from .stability import *  # noqa: F401,F403

__all__ = [*_inputs.__all__, *_ks_exact.__all__, *_sampling.__all__, *_lehmer.__all__, *_intervals.__all__,
           *_calibration.__all__, *_implicit.__all__, *_odds.__all__, *_stability.__all__]

# Sampling-free KS: metrics of a model's answer distribution over an enumerable support.
from . import answer_distribution as _answer_distribution  # noqa: E402
from .answer_distribution import *  # noqa: E402,F401,F403

__all__ += _answer_distribution.__all__
