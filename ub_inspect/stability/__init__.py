from .stability import record_to_sample, stability

__all__ = ["stability", "record_to_sample"]
