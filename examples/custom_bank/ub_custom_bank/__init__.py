"""Example plug-in package for unpredictabench: the ``custom_demo`` bank and the ``zipf`` family (``bank.py``)."""
