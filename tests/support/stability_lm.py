"""A test-only lm-eval model for the stability tasks (``ub_tar_*``): the r-th request with one context is run r.

lm-eval sends a document's N repeats as N requests with the same context and hands their replies to
``process_results`` in that order, so a scripted reply per (item, run) gives known TARr / TARa figures.
Subclasses say what each run replies (:meth:`RunIndexedStabilityLM.reply`) and register themselves."""

from __future__ import annotations

from lm_eval.api.model import LM

from ub_core.problems.stability import StabilityItem, find_stability_item


class RunIndexedStabilityLM(LM):
    def __init__(self, **kwargs):
        super().__init__()

    def reply(self, item: StabilityItem, run: int) -> str:
        raise NotImplementedError

    def generate_until(self, requests, disable_tqdm: bool = False):
        runs: dict[str, int] = {}
        out = []
        for req in requests:
            ctx = req.args[0]
            run = runs.get(ctx, 0)
            runs[ctx] = run + 1
            out.append(self.reply(find_stability_item(ctx), run))
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError

    loglikelihood_rolling = loglikelihood
