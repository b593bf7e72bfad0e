from .ksn_logprob import candidate_logprobs, ksn_logprob, ksn_logprob_scorer, record_to_sample

__all__ = ["ksn_logprob", "candidate_logprobs", "ksn_logprob_scorer", "record_to_sample"]
