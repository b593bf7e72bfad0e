# Hooks for the ub_calibration_* and ub_implicit_* tasks: thin re-exports of ub_lmeval.option_logprob_hooks (the
# science lives in ub_core).
from ub_lmeval.option_logprob_hooks import (grid_behaviour_rate, option_logprob_dataset,  # noqa: F401
                                            nanmean, process_results_option_logprob, total)
from ub_lmeval.selected_task import SelectedItemsTask  # noqa: F401
