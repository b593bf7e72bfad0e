# Hooks for the ub_ksn tasks: thin re-exports of ub_lmeval (the science lives in ub_core).
from ub_lmeval.ksn_hooks import ksn_dataset, nanmean, process_results_ksn, total  # noqa: F401
from ub_lmeval.selected_task import SelectedItemsTask  # noqa: F401
