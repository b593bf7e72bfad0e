from .explicit import explicit

__all__ = ["explicit"]
