"""Grouping a document's repeats into one request: lm-eval expands ``repeats: N`` into N identical requests, and
``ub-vllm`` / ``ub-openai-*`` send each group as one request with ``n`` = its size, so the prompt is processed once.
Pure logic, tested without vLLM or a server.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

__all__ = ["group_repeats", "generate_grouped"]


def group_repeats(keys: Sequence[Any]) -> list[list[int]]:
    """Indices of identical keys, grouped in first-seen order.

    lm-eval expands ``repeats: N`` into N identical requests; grouping them lets one ``SamplingParams(n=N)``
    call produce all N samples while the prompt is processed once.
    """
    groups: OrderedDict[Any, list[int]] = OrderedDict()
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return list(groups.values())


class _OneCompletion:
    """Stands in for a vLLM RequestOutput holding a single completion (lm-eval reads ``outputs[0]``)."""

    __slots__ = ("outputs", "prompt_token_ids")

    def __init__(self, completion: Any, prompt_token_ids: Any) -> None:
        self.outputs = [completion]
        self.prompt_token_ids = prompt_token_ids


def generate_grouped(requests: Sequence[Sequence[int]], sampling_params: Sequence[Any], generate,
                     with_n) -> list:
    """Run ``generate`` once per group of identical (prompt tokens, sampling params) with ``n`` = group size,
    and hand each original request one of the group's completions, in order.

    ``generate(prompts, params)`` returns one output per prompt whose ``outputs`` holds its ``n`` completions;
    ``with_n(params, n)`` copies sampling params with ``n`` set. Pure logic, tested without vLLM.
    """
    keys = [(tuple(tok), repr(sp)) for tok, sp in zip(requests, sampling_params)]
    groups = group_repeats(keys)
    outputs = generate([requests[g[0]] for g in groups], [with_n(sampling_params[g[0]], len(g)) for g in groups])
    result: list = [None] * len(requests)
    for group, out in zip(groups, outputs):
        completions = list(out.outputs)
        if len(completions) != len(group):
            raise RuntimeError(f"asked vLLM for {len(group)} completions of one prompt, got {len(completions)}")
        for i, completion in zip(group, completions):
            result[i] = _OneCompletion(completion, getattr(out, "prompt_token_ids", None))
    return result
