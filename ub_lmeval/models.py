"""lm-eval models: ``ub-oracle`` and ``ub-collapse`` (offline twins of Inspect's ``ub/`` providers) and
``ub-vllm`` (lm-eval's vLLM model, sending a document's N repeats as one ``SamplingParams(n=N)`` call).

Registered when ``ub_lmeval`` is imported (lm-eval 0.4.13 registers models by import only). lm-eval's own
models are imported first: its registry is filled lazily only while empty, so registering ours first would
hide the built-ins.
"""

from __future__ import annotations

import math
from typing import Any

import lm_eval.models  # noqa: F401  (fill lm-eval's registry before adding to it)
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from tqdm import tqdm

from ub_core import options
from ub_core.oracle import (collapse_value, oracle_values, outcome_probabilities, render_replies, render_value,
                            text_reply)
from ub_core.logprob.ksn_logprob import CHAT_DELIMITER, RAW_DELIMITER, oracle_candidate_logprob
from ub_core.logprob.option_logprob_oracle import oracle_choice, oracle_option_logprob
from ub_core.problems import OptionItem, Problem, find_item
from ub_core.problems.base import requested_list_size
from ub_core.problems.candidates import candidate_set

from .grouping import generate_grouped, group_repeats  # noqa: F401  (re-exported: tests and ub-vllm use them)
from .results_json import TokenizedLogprob

__all__ = ["UBOracleLM", "UBCollapseLM", "group_repeats", "UBVLLMPlaceholder"]


class _UBLM(LM):
    mode = "oracle"

    #: what lm-eval's CLI passes to every model (``batch_size``, ``max_batch_size``, ``device``) and the name
    #: ``ub-lm-eval`` adds (``model``); any other ``--model_args`` key is refused
    PASSED_BY_LM_EVAL = frozenset({"batch_size", "max_batch_size", "device", "model"})
    #: the ``--model_args`` these models take (name -> checker; None: any text), checked before the run loads a model
    #: (:func:`ub_lmeval.run_check.check_model_args`) and again here
    MODEL_ARGS = {"seed": lambda value, name: options.integer(value, name, low=0), "model": None}

    def __init__(self, seed: int = 0, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - self.PASSED_BY_LM_EVAL)
        if unknown:
            raise options.OptionValueError(f"--model ub-{self.mode}: unknown --model_args {', '.join(unknown)}; "
                                           f"ub-{self.mode} takes seed (and model, a name for the results)")
        super().__init__()
        self.seed = self.MODEL_ARGS["seed"](seed, "seed")
        self._best: dict[str, str] = {}

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        contexts = [req.args[0] for req in requests]
        # group by prompt so a problem's repeats are drawn in one call, in request order
        out = [""] * len(contexts)
        # lm-eval's own progress bar, as its models draw it: one tick per request
        pbar = tqdm(total=len(contexts), disable=disable_tqdm, desc="Running generate_until requests")
        for idx in group_repeats(contexts):
            pbar.update(len(idx))
            ctx = contexts[idx[0]]
            found = find_item(ctx)  # every bank's prompt index (ub_core.problems.Bank.find)
            problem = found[1] if found is not None else None
            if not isinstance(problem, Problem):
                reply = text_reply(problem, self.mode) if problem is not None else None
                for i in idx:
                    out[i] = reply or f"ub-{self.mode} cannot answer: the prompt is not one of the built-in problems."
                continue
            k = requested_list_size(ctx)
            if self.mode == "collapse":
                values = [collapse_value(problem)] * (len(idx) * k)
            else:
                values = oracle_values(problem, len(idx) * k, seed=self.seed)
            for i, reply in zip(idx, render_replies(problem, values, k)):
                out[i] = reply
        pbar.close()
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        """True log-probabilities of the continuation where the problem's outcome set is finite; a
        continuation outside it (or an unknown prompt) gets -inf. For the option-logprob banks the canonical
        variant " option" gets log p (collapse: all mass on the first option), every other variant -inf."""
        out = []
        for req in tqdm(requests, disable=disable_tqdm, desc="Running loglikelihood requests"):
            ctx, cont = req.args[0], req.args[1]
            found = find_item(ctx)  # every bank's prompt index (ub_core.problems.Bank.find)
            item = found[1] if found is not None else None
            if isinstance(item, OptionItem) and item.prompt == ctx:  # see ub_core.logprob.option_logprob_oracle
                lp = oracle_option_logprob(item, str(cont), self.mode)
                top = item.options[oracle_choice(item, self.mode)]
                # each continuation is one "token", as the Inspect ub/ providers report it
                out.append((TokenizedLogprob(lp, (str(cont),)), lp > -math.inf and str(cont) == f" {top}"))
                continue
            problem = item if isinstance(item, Problem) else None
            if problem is not None and ctx == problem.full_prompt and candidate_set(problem) is not None:
                # sampling-free KS@N (ub_ksn_logprob): a candidate after " " (raw) or "" (--apply_chat_template);
                # anything else (a bare " red") falls through to the outcome table below
                lp, greedy = self._candidate(problem, str(cont))
                if lp > -math.inf:
                    out.append((lp, greedy))
                    continue
            probs = outcome_probabilities(problem) if problem is not None else None
            if not probs:
                out.append((-math.inf, False))
                continue
            label = str(cont).strip().strip("{}").strip()
            if self.mode == "collapse":
                top = render_value(problem, collapse_value(problem)).strip("{}")
                out.append((0.0 if label == top else -math.inf, label == top))
                continue
            q = probs.get(label, 0.0)
            best = max(probs, key=probs.get)
            out.append((math.log(q) if q > 0 else -math.inf, label == best))
        return out

    def _candidate(self, problem, cont: str) -> tuple[float, bool]:
        delim = RAW_DELIMITER if cont.startswith(RAW_DELIMITER) else CHAT_DELIMITER
        lp = oracle_candidate_logprob(problem, cont, self.mode, delim)
        if problem.id not in self._best:  # the greedy candidate, once per problem (collapse_value reads the truth)
            self._best[problem.id] = max((oracle_candidate_logprob(problem, RAW_DELIMITER + c, self.mode), c)
                                         for c in candidate_set(problem).texts)[1]
        return lp, lp > -math.inf and cont == delim + self._best[problem.id]

    # --apply_chat_template: the offline models have no chat template; the user message is the prompt, as is
    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        return "\n\n".join(str(m.get("content", "")) for m in chat_history)

    @property
    def tokenizer_name(self) -> str:
        return f"ub-{self.mode}"

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError(f"ub-{self.mode} has no rolling log-likelihood (it is not a language model)")


@register_model("ub-oracle")
class UBOracleLM(_UBLM):
    """The Random Machine: fresh true draws of the problem in the prompt (``--model_args seed=N``)."""

    mode = "oracle"


@register_model("ub-collapse")
class UBCollapseLM(_UBLM):
    """Always the same plausible answer: the mode (discrete) or the median (continuous)."""

    mode = "collapse"


# ------------------------------------------------------------------------------------------------ ub-vllm

@register_model("ub-vllm")
class UBVLLMPlaceholder(LM):
    """``--model ub-vllm``: built on first use, because lm-eval's vLLM module imports vllm at import time.
    Constructing it returns the real :class:`ub_lmeval._vllm` model."""

    def loglikelihood(self, requests, disable_tqdm: bool = False):  # pragma: no cover - never instantiated
        raise NotImplementedError

    loglikelihood_rolling = generate_until = loglikelihood

    @classmethod
    def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None):
        from ._vllm import ub_vllm_class

        return ub_vllm_class().create_from_arg_string(arg_string, additional_config)

    @classmethod
    def create_from_arg_obj(cls, arg_dict: dict, additional_config: dict | None = None):
        from ._vllm import ub_vllm_class

        return ub_vllm_class().create_from_arg_obj(arg_dict, additional_config)

    def __new__(cls, *args: Any, **kwargs: Any):
        from ._vllm import ub_vllm_class

        return ub_vllm_class()(*args, **kwargs)


from . import openai_models  # noqa: E402,F401  (registers ub-openai-completions, ub-openai-chat)
