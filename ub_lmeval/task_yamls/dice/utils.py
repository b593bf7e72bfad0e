# Hooks for the ub_dice tasks: thin re-exports of ub_lmeval.dice_hooks (the science lives in ub_core).
from ub_lmeval.dice_hooks import (dice_dataset, dice_mcq_dataset, letter_chi2, letter_p_value,  # noqa: F401
                                  letters_uniform, nanmean, process_results_dice, process_results_mcq)
