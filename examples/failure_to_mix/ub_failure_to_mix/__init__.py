"""Failure to Mix as an unpredictabench plug-in: the ``ftm`` bank and its metrics (``mix.py``), the Inspect task
(``task.py``) and the lm-eval task ``ub_mix`` (``ub_mix.yaml``, generated from the spec)."""
