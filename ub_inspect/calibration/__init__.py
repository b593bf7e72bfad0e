from .calibration import calibration

__all__ = ["calibration"]
