# Hooks for the ub_ksn_logprob tasks: thin re-exports of ub_lmeval.ksn_logprob_hooks (the science lives in ub_core).
from ub_lmeval.ksn_logprob_hooks import (ksn_logprob_dataset, nanmean,  # noqa: F401
                                         process_results_ksn_logprob, total)
from ub_lmeval.selected_task import SelectedItemsTask  # noqa: F401
