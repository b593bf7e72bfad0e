from .odds import load_items, odds, record_to_sample

__all__ = ["odds", "load_items", "record_to_sample"]
