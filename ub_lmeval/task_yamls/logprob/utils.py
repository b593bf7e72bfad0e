# Hooks for the ub_calibration_* and ub_implicit_* tasks: thin re-exports of ub_lmeval.logprob_hooks (the science
# lives in ub_core).
from ub_lmeval.logprob_hooks import (grid_behaviour_rate, logit_dataset,  # noqa: F401
                                   nanmean, process_results_logit, total)
from ub_lmeval.selected_task import SelectedItemsTask  # noqa: F401
