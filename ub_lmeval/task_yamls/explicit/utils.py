# Hooks for the ub_explicit_* tasks: thin re-exports of ub_lmeval.logprob_hooks (the science
# lives in ub_core).
from ub_lmeval.logprob_hooks import (grid_behaviour_rate, logit_dataset,  # noqa: F401
                                   nanmean, process_results_logit, total)
