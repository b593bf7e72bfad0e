from .implicit import implicit

__all__ = ["implicit"]
