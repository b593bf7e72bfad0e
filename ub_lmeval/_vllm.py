"""``ub-vllm``: lm-eval's vLLM model with a document's repeats sent as one ``SamplingParams(n=N)`` request.

Everything else (tokenisation, chat templates, truncation, stop sequences, caching, log-likelihoods) is the
parent's. Identical requests are adjacent after lm-eval's length-sorted collation, so within a batch they
group; use ``--batch_size auto`` (one batch) so a document's repeats share a batch.
"""

from __future__ import annotations

import copy
from functools import lru_cache


@lru_cache(maxsize=1)
def ub_vllm_class():
    from lm_eval.models.vllm_causallms import VLLM

    from .grouping import generate_grouped

    def with_n(params, n: int):
        clone = copy.deepcopy(params)
        clone.n = n
        return clone

    class UBVLLM(VLLM):
        def _model_generate(self, requests, generate: bool = False, sampling_params=None):
            if not generate or sampling_params is None:
                return super()._model_generate(requests, generate=generate, sampling_params=sampling_params)
            if not isinstance(sampling_params, list):
                sampling_params = [sampling_params] * len(requests)
            parent = super()._model_generate
            return generate_grouped(requests, sampling_params,
                                    lambda reqs, params: parent(reqs, generate=True, sampling_params=params),
                                    with_n)

    UBVLLM.__name__ = UBVLLM.__qualname__ = "UBVLLM"
    return UBVLLM
