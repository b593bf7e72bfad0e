# Hooks for the ub_explicit_* tasks: thin re-exports of ub_lmeval.option_logprob_hooks (the science
# lives in ub_core).
from ub_lmeval.option_logprob_hooks import (grid_behaviour_rate, option_logprob_dataset,  # noqa: F401
                                            nanmean, process_results_option_logprob, total)
