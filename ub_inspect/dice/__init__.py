from .dice import dice, dice_scorer, load_items, record_to_sample

__all__ = ["dice", "dice_scorer", "load_items", "record_to_sample"]
