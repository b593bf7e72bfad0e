# Hooks for the ub_dice tasks: thin re-exports of ub_lmeval.dice_hooks (the science lives in ub_core).
from ub_lmeval.dice_hooks import dice_dataset, nanmean, process_results_dice  # noqa: F401
