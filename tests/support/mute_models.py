"""Offline models that write no valid answer to some problems: the reference models everywhere else.

- :class:`MuteInspectAPI`: ``ub/oracle``'s Inspect provider, except that for a problem of ``MUTE`` every candidate
  answer has probability 0 (listed route) and the reply tree holds one invalid reply ``"?"`` with half the mass,
  the other half left unlisted (tree route: missing mass that could still be valid). :func:`mute_inspect_model`
  registers it as the Inspect provider ``ubmute``.
- :class:`MuteLM`: lm-eval's ``ub-oracle``, except that every candidate of a problem of ``MUTE`` gets ``-inf``.
"""

from __future__ import annotations

import math

#: the problem the mute models write no valid answer to (a listed support: both routes reach it)
MUTE = frozenset({"ce-binomial-conc"})
#: the tree route's mass on the one invalid reply of a mute problem; the rest is left unlisted
INVALID_SHARE = 0.5


def mute_inspect_model():
    """The Inspect model name ``ubmute/oracle`` (the provider is registered on the first call)."""
    from inspect_ai.model import modelapi

    modelapi(name="ubmute")(_mute_api)
    return "ubmute/oracle"


def _mute_api():
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, Logprob, Logprobs
    from inspect_ai.model import ModelOutput, TopLogprob

    from ub_core.logprob.eos import OFFLINE_EOS
    from ub_inspect.providers import UBModelAPI

    class MuteInspectAPI(UBModelAPI):
        def _candidate_output(self, problem, continuation, prompt, n):
            out = super()._candidate_output(problem, continuation, prompt, n)
            if problem.id in MUTE:
                for choice in out.choices:
                    for lp in choice.prompt_logprobs.content[1:]:
                        lp.logprob = -math.inf  # probability 0
            return out

        def _tree_output(self, problem, prefix, prompt, n, config):
            if problem.id not in MUTE:
                return super()._tree_output(problem, prefix, prompt, n, config)
            top = [("?", math.log(INVALID_SHARE))] if prefix == "" else [(OFFLINE_EOS, 0.0)]
            logprobs = Logprobs(content=[Logprob(token=top[0][0], logprob=top[0][1],
                                                 top_logprobs=[TopLogprob(token=t, logprob=v) for t, v in top])])
            return ModelOutput(model="ub/mute", choices=[ChatCompletionChoice(
                message=ChatMessageAssistant(content=top[0][0], model="ub/mute", source="generate"),
                stop_reason="max_tokens", logprobs=logprobs) for _ in range(n)])

    return MuteInspectAPI


def mute_lm():
    from ub_core.problems import find_item
    from ub_lmeval.models import UBOracleLM

    class MuteLM(UBOracleLM):
        def loglikelihood(self, requests, disable_tqdm: bool = False):
            out = super().loglikelihood(requests, disable_tqdm)
            for i, req in enumerate(requests):
                found = find_item(req.args[0])
                if found is not None and getattr(found[1], "id", None) in MUTE:
                    out[i] = (-math.inf, False)
            return out

    return MuteLM()
