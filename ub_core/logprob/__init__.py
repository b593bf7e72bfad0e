"""Everything that reads a model's log-probabilities instead of sampling it, for both frameworks.

* :mod:`.option_logprob`: the option banks (calibration, implicit, explicit): one log-probability per option;
* :mod:`.option_logprob_oracle`: the offline reference models' option log-probabilities;
* :mod:`.ksn_logprob`: sampling-free KS@N where the answers can be listed (one log-probability per candidate);
* :mod:`.reply_tree`: sampling-free KS@N for every problem, by expanding the model's reply tree;
* :mod:`.oracle_replies`: the offline models' reply laws for the tree route;
* :mod:`.eos`: the text that ends a model's reply (:func:`eos_text`), shared by the Inspect and lm-eval adapters.

Submodules are imported on use (``from ub_core.logprob.ksn_logprob import ...``): importing this package costs
nothing.
"""
