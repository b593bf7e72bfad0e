# Hooks for the ub_tar tasks: thin re-exports of ub_lmeval.stability (the science lives in ub_core).
from ub_lmeval.stability import (median_run_accuracy, process_results_tar, run_accuracy_spread,  # noqa: F401
                                 stability_dataset, unreadable_rate)
