# Hooks for the ub_odds tasks: thin re-exports of ub_lmeval.odds_hooks (the science lives in ub_core).
from ub_lmeval.odds_hooks import distribution_se, nanmean, odds_dataset, process_results_odds  # noqa: F401
