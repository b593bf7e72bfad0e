from .dice_mcq import dice_mcq, dice_mcq_scorer, letter_uniformity_metric

__all__ = ["dice_mcq", "dice_mcq_scorer", "letter_uniformity_metric"]
