"""A synthetic next-token model over a digit-splitting tokenizer, served to lm-eval, to Inspect and to a direct
reference computation, for the option-logprob parity test.

The tokenizer is the tiny byte-level BPE of ``tests/support/tiny_model.py`` (digits one per token: ``" 12"`` is
``[" ", "1", "2"]``, as with Mistral, Qwen or Gemma). The model's next-token distribution depends on the last two
token ids only: a log-softmax of seeded normal logits, with the space and the digits raised so that they lead the
top-20 lists (the Inspect ``top_logprobs`` route reads only those). Exact, cheap and the same in every route.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

TOP_K = 20
TAIL = 16


class DigitLM:
    """``next_logprobs(ids)``: log-probabilities of every vocabulary token after the token ids ``ids``."""

    def __init__(self, tokenizer, seed: int = 0):
        self.tokenizer = tokenizer
        self.seed = seed
        self.vocab = len(tokenizer)
        self.boost = np.zeros(self.vocab)
        for text in [" "] + [str(d) for d in range(10)]:
            (tid,) = tokenizer.encode(text, add_special_tokens=False)
            self.boost[tid] = 7.0
        self._cache: dict[tuple[int, int], np.ndarray] = {}
        self.texts = [tokenizer.decode([i]) for i in range(self.vocab)]

    def next_logprobs(self, ids: Sequence[int]) -> np.ndarray:
        key = (int(ids[-2]) if len(ids) > 1 else -1, int(ids[-1]) if ids else -1)
        if key not in self._cache:
            rng = np.random.default_rng([self.seed, key[0] + 1, key[1] + 1])
            logits = rng.normal(0.0, 1.5, self.vocab) + self.boost
            self._cache[key] = logits - np.logaddexp.reduce(logits)
        return self._cache[key]

    def sequence_logprob(self, context: Sequence[int], continuation: Sequence[int]) -> float:
        ids, total = list(context), 0.0
        for t in continuation:
            total += float(self.next_logprobs(ids)[t])
            ids.append(int(t))
        return total

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))


def load(path: str | Path, seed: int = 0) -> DigitLM:
    from transformers import AutoTokenizer

    return DigitLM(AutoTokenizer.from_pretrained(str(path), local_files_only=True), seed)


# ------------------------------------------------------------------------------------------------ lm-eval

def lmeval_model(lm: DigitLM):
    """An lm-eval ``TemplateLM`` over ``lm``: lm-eval itself splits context and continuation into tokens."""
    from lm_eval.api.model import TemplateLM

    class _DigitTemplateLM(TemplateLM):
        def __init__(self):
            super().__init__()

        @property
        def eot_token_id(self) -> int:
            return int(lm.tokenizer.eos_token_id)

        def tok_encode(self, string, add_special_tokens=None, **kwargs):
            return lm.encode(string)

        def _loglikelihood_tokens(self, requests, **kwargs):
            return [(lm.sequence_logprob(ctx, cont), False) for _, ctx, cont in requests]

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def generate_until(self, requests, disable_tqdm=False):
            raise NotImplementedError

    return _DigitTemplateLM()


# ------------------------------------------------------------------------------------------------ Inspect

def register_inspect_provider(lm: DigitLM, name: str = "ubdigitlm") -> str:
    """Register an Inspect provider serving ``lm`` like a completions server: ``prompt_logprobs`` (every input
    token's log-probability with its text) and ``top_logprobs`` (the next token's top list). Returns the model
    name to pass to ``inspect eval``."""
    from inspect_ai.model import modelapi

    api = inspect_api_class(lm, name)
    modelapi(name=name)(lambda: api)
    return f"{name}/digits"


def inspect_api_class(lm: DigitLM, name: str = "ubdigitlm"):
    """The Inspect ``ModelAPI`` class serving ``lm`` (:func:`register_inspect_provider`)."""
    from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, GenerateConfig, Logprob, Logprobs,
                                  ModelAPI, ModelOutput, ModelUsage, TopLogprob)

    class _DigitAPI(ModelAPI):
        def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **kw):
            super().__init__(model_name, base_url, api_key, [], config)

        async def generate(self, input, tools, tool_choice, config):
            text = "".join(m.text for m in input)
            ids = lm.encode(text)
            prompt_logprobs = logprobs = None
            if config.prompt_logprobs:
                # the last TAIL input tokens only (a server returns them all; the reader takes them from the end,
                # and a variant is at most a few tokens): cheap enough to serve hundreds of items
                start = max(1, len(ids) - TAIL)
                content = [Logprob(token=lm.texts[ids[i]], logprob=float(lm.next_logprobs(ids[:i])[ids[i]]))
                           for i in range(start, len(ids))]
                prompt_logprobs = Logprobs(content=content)
            if config.logprobs:
                nxt = lm.next_logprobs(ids)
                top = np.argsort(-nxt)[: int(config.top_logprobs or 1)]
                logprobs = Logprobs(content=[Logprob(token=lm.texts[top[0]], logprob=float(nxt[top[0]]),
                                                     top_logprobs=[TopLogprob(token=lm.texts[t],
                                                                              logprob=float(nxt[t])) for t in top])])
            choice = ChatCompletionChoice(message=ChatMessageAssistant(content=lm.texts[int(np.argmax(
                lm.next_logprobs(ids)))], source="generate"), stop_reason="stop", logprobs=logprobs,
                prompt_logprobs=prompt_logprobs)
            return ModelOutput(model=name, choices=[choice],
                               usage=ModelUsage(input_tokens=len(ids), output_tokens=1, total_tokens=len(ids) + 1))

    return _DigitAPI


class DirectModel:
    """What ``inspect_ai.model.get_model()`` returns, reduced to ``generate(text, config)``: the solver's reading
    code without the eval harness (its per-request overhead), for checks over hundreds of items."""

    def __init__(self, lm: DigitLM):
        from inspect_ai.model import ChatMessageUser

        self._api = inspect_api_class(lm)("digits")
        self._message = ChatMessageUser

    async def generate(self, text, config=None):
        return await self._api.generate([self._message(content=text)], [], None, config)


# ------------------------------------------------------------------------------------------------ reference

def reply_is_option_mass(lm: DigitLM, item, convention: str = "exclusive") -> list[float]:
    """Each option's mass computed from the model directly. A variant's probability is the joint probability of its
    continuation tokens (split as lm-eval splits them); under ``exclusive`` it is multiplied by the probability that
    the next token does not go on towards another listed variant, ``1 - sum_x P(x | prompt + v)`` over the tokens
    x with v + x a prefix of a listed variant's tokens. Variants with the same tokens count once."""
    from ub_core.logprob.option_logprob import flatten_variants

    ctx = lm.encode(item.prompt)
    choices, owners = flatten_variants(item)
    seqs = []
    for c in choices:
        whole = lm.encode(item.prompt + c)
        assert whole[: len(ctx)] == ctx, "the prompt's tokens change with the continuation"
        seqs.append(tuple(whole[len(ctx):]))
    mass = [0.0] * len(item.options)
    seen = set()
    for seq, owner in zip(seqs, owners):
        if seq in seen:
            continue
        seen.add(seq)
        p = math.exp(lm.sequence_logprob(ctx, seq))
        if convention == "exclusive":
            nexts = {s[len(seq)] for s in set(seqs) if len(s) > len(seq) and s[: len(seq)] == seq}
            if nexts:
                nxt = lm.next_logprobs(list(ctx) + list(seq))
                p *= 1.0 - math.fsum(math.exp(nxt[x]) for x in nexts)
        mass[owner] += p
    return mass
