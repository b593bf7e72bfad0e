"""Model providers shipped with the package: ``ub/oracle`` (the Random Machine) and ``ub/collapse``.

Inspect gives a provider only the messages, so the provider maps the last user message back to the problem it
states (the built-in banks' prompts are unique). Both answer in our braces format; a list-prompting request
("Give 10 independent values ...") gets a list. They set ``usage`` themselves: Inspect's ``mockllm`` counts
tokens with a downloaded tokenizer, which fails offline.

- ``ub/oracle`` honours ``num_choices`` and ``seed`` (a request with the same seed and the same problem gives
  the same draws; successive requests for one problem get fresh draws, so top-ups are independent), and returns
  ``top_logprobs`` with the true outcome probabilities when ``logprobs`` is asked for and the outcome set is
  finite.
- ``ub/collapse`` always gives the same plausible value: the mode (discrete) or median (continuous).
- Model arguments choose how both write a number, one law for their sampled replies and their reply trees
  (:class:`ub_core.logprob.oracle_replies.ReplyWriter`): ``-M digits=N`` (N significant digits; default full
  precision, ``repr(float)``) and ``-M number_token_digits=K`` (digit runs split into tokens of up to K digits in
  the tree route: 1 as Qwen and Mistral tokenizers, the default; 3 as Llama 3 and GPT-4). Any other is refused.
- For the option-logprob banks (calibration, implicit, explicit; :mod:`ub_core.logprob.option_logprob_oracle`), an input
  that is an item's prompt, optionally followed by a continuation, gets ``prompt_logprobs`` (when asked for) with the
  continuation's true log-probability, and ``logprobs`` with the options' true first-token probabilities;
  ``ub/collapse`` puts all mass on the first option.
- For sampling-free KS@N (``ub_inspect/ksn_logprob``), a KS@N prompt followed by a candidate answer, asked with
  ``prompt_logprobs``, gets the candidate's true log-probability (``ub/collapse``: all mass on its one answer).
"""

from __future__ import annotations

import itertools
import math
import os
from collections import defaultdict
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    TopLogprob,
)

from ub_core.logprob.eos import OFFLINE_EOS
from ub_core.logprob.ksn_logprob import oracle_candidate_logprob
from ub_core.oracle import (collapse_value, find_problem, oracle_values, outcome_probabilities, render_replies,
                            text_reply)
from ub_core.logprob.option_logprob_oracle import oracle_choice, oracle_option_logprob, oracle_top_logprobs
from ub_core.problems import OptionItem, Problem, find_item
from ub_core.problems.base import requested_list_size

from ._options import OptionError
from .option_logprob import CONTINUATIONS
from ub_core.logprob.oracle_replies import MAX_DIGITS, MAX_NUMBER_TOKEN_DIGITS, ReplyWriter, oracle_reply_law

__all__ = ["UBModelAPI", "find_problem"]

MODES = ("oracle", "collapse")
#: The model arguments (``-M``) of ``ub/oracle`` and ``ub/collapse``: how they write a reply (one law for their
#: sampled replies and their tree replies; :class:`ub_core.logprob.oracle_replies.ReplyWriter`).
MODEL_ARGS = ("digits", "number_token_digits")


def _writer(model_name: str, model_args: dict[str, Any]) -> ReplyWriter:
    """The writer the model arguments choose, each value checked (one line for a bad one)."""
    values: dict[str, int | None] = {}
    for name, low, high in (("digits", 1, MAX_DIGITS), ("number_token_digits", 1, MAX_NUMBER_TOKEN_DIGITS)):
        if name not in model_args:
            continue
        raw = model_args[name]
        if name == "digits" and isinstance(raw, str) and raw.strip().lower() in ("full", "none"):
            values[name] = None
            continue
        value = None
        if not isinstance(raw, bool) and isinstance(raw, (int, str)):
            try:
                value = int(str(raw).strip())
            except ValueError:
                pass
        if value is None or not low <= value <= high:
            extra = " or full (repr, the default)" if name == "digits" else " (1, the default: one digit a token)"
            raise OptionError(f"--model ub/{model_name}: -M {name} must be an integer from {low} to {high}{extra}, "
                              f"got {raw!r}")
        values[name] = value
    return ReplyWriter(**values)


def _message_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(getattr(part, "text", "") or "" for part in content)


class UBModelAPI(ModelAPI):
    """``ub/oracle`` and ``ub/collapse``; cheap to construct (Inspect builds a second instance for model info)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        # one line each (Inspect prints an OptionError's message alone), not a traceback through its task group
        if model_name not in MODES:
            raise OptionError(f"--model ub/{model_name}: no such model; use ub/oracle or ub/collapse")
        unknown = sorted(set(model_args) - set(MODEL_ARGS))
        if unknown:
            raise OptionError(f"--model ub/{model_name}: unknown model argument(s) "
                              f"{', '.join(f'-M {k}' for k in unknown)}; ub/{model_name} takes "
                              f"{' and '.join(f'-M {k}' for k in MODEL_ARGS)}")
        self.mode = model_name
        self.writer = _writer(model_name, model_args)
        self._requests: dict[str, itertools.count] = defaultdict(itertools.count)
        # without a seed, requests still differ from run to run
        self._entropy = int.from_bytes(os.urandom(4), "little")

    #: reads many continuations in one request (:data:`ub_inspect.option_logprob.CONTINUATIONS`)
    ub_continuations = True

    def max_connections(self) -> int:
        return 32

    async def generate(self, input, tools, tool_choice, config: GenerateConfig) -> ModelOutput:
        users = [m for m in input if getattr(m, "role", None) == "user"]
        text = _message_text(users[-1]) if users else ""
        n = max(1, int(config.num_choices or 1))
        continuations = (config.extra_body or {}).get(CONTINUATIONS)
        if continuations is None:
            return self._answer(text, n, config)
        # one request for many continuations (ub_inspect.option_logprob.CONTINUATIONS): continuation i's prompt
        # log-probabilities are those of the first choice of the request ``text + continuation`` alone, less the
        # prompt's "token" (``text`` itself: what is read is the continuation's tokens at the end), written as
        # ``[token, logprob]`` pairs in the output's metadata (None: no prompt_logprobs); the one choice is the
        # reply to the first continuation
        reads: list[list[list] | None] = []
        first: list[ChatCompletionChoice] = []
        n_in = n_out = 0
        for c in continuations:
            full = text + str(c)
            found = find_item(full)
            if isinstance(found[1] if found else None, OptionItem) and config.prompt_logprobs and first:
                # what _answer would put in its choice's prompt_logprobs (_option_logprob_output), without the
                # choice around it
                item = found[1]
                pairs = self._option_prompt_pairs(item, full[len(item.prompt):])
                n_in, n_out = n_in + len(full.split()), n_out + 1
            else:
                out = self._answer(full, 1, config)
                plp = out.choices[0].prompt_logprobs if out.choices else None
                pairs = None if plp is None else [(t.token, t.logprob) for t in plp.content]
                if out.usage is not None:
                    n_in, n_out = n_in + out.usage.input_tokens, n_out + out.usage.output_tokens
                if not first and out.choices:
                    first.append(out.choices[0].model_copy(update={"prompt_logprobs": None}))
            if pairs is not None and len(pairs) > 1 and pairs[0][0] == text:
                pairs = pairs[1:]
            reads.append(None if pairs is None else [[t, lp] for t, lp in pairs])
        return ModelOutput(model=f"ub/{self.mode}", choices=first, metadata={CONTINUATIONS: reads},
                           usage=ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out))

    def _answer(self, text: str, n: int, config: GenerateConfig) -> ModelOutput:
        """The reply to the user text ``text`` with ``n`` choices."""
        found = find_item(text)  # every bank's prompt index (ub_core.problems.Bank.find)
        item = found[1] if found is not None else None
        if isinstance(item, OptionItem):
            return self._option_logprob_output(item, text[len(item.prompt):], text, n, config)
        if not isinstance(item, Problem):
            reply = text_reply(item, self.mode) if item is not None else None
            if reply is None:
                reply = f"ub/{self.mode} cannot answer: the prompt is not one of the built-in problems."
            return self._output([reply] * n, text, None, config)
        problem = item
        if config.logprobs and config.max_tokens == 1 and text.startswith(problem.full_prompt):
            return self._tree_output(problem, text[len(problem.full_prompt):], text, n, config)
        if config.prompt_logprobs and text.startswith(problem.full_prompt):
            return self._candidate_output(problem, text[len(problem.full_prompt):], text, n)
        k = requested_list_size(text)
        if self.mode == "collapse":
            values = [collapse_value(problem)] * (n * k)
        else:
            request = next(self._requests[problem.id])
            base = config.seed if config.seed is not None else self._entropy
            stream = (int(base) & 0xFFFF_FFFF) * 1_000_003 + request
            values = oracle_values(problem, n * k, seed=stream)
        replies = render_replies(problem, values, k, self.writer.digits)
        return self._output(replies, text, problem, config)

    def _output(self, replies: list[str], prompt: str, problem: Problem | None,
                config: GenerateConfig) -> ModelOutput:
        probs = outcome_probabilities(problem) if (problem is not None and config.logprobs) else None
        choices = []
        for reply in replies:
            logprobs = None
            if probs:
                token = reply.strip("{}")
                top = sorted(probs.items(), key=lambda kv: -kv[1])[: max(1, int(config.top_logprobs or 1))]
                logprobs = Logprobs(content=[Logprob(
                    token=token, logprob=math.log(probs[token]) if probs.get(token, 0) > 0 else -math.inf,
                    top_logprobs=[TopLogprob(token=t, logprob=math.log(q) if q > 0 else -math.inf) for t, q in top])])
            choices.append(ChatCompletionChoice(
                message=ChatMessageAssistant(content=reply, model=f"ub/{self.mode}", source="generate"),
                stop_reason="stop", logprobs=logprobs))
        n_in = len(prompt.split())
        n_out = sum(len(r.split()) for r in replies)
        return ModelOutput(model=f"ub/{self.mode}", choices=choices,
                           usage=ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out))

    def _option_logprob_output(self, item: OptionItem, continuation: str, prompt: str, n: int,
                      config: GenerateConfig) -> ModelOutput:
        """A log-probability item (calibration / implicit / explicit): the reply is the most probable option
        (collapse: the first); ``prompt_logprobs`` carry the continuation's true log-probability after the
        prompt, ``logprobs`` the first-token top list (see :mod:`ub_core.logprob.option_logprob_oracle`)."""
        reply = " " + item.options[oracle_choice(item, self.mode)]
        prompt_logprobs = None
        if config.prompt_logprobs:
            prompt_logprobs = Logprobs(content=[Logprob(token=t, logprob=lp)
                                                for t, lp in self._option_prompt_pairs(item, continuation)])
        logprobs = None
        if config.logprobs:
            top = oracle_top_logprobs(item, self.mode, int(config.top_logprobs or 1))
            logprobs = Logprobs(content=[Logprob(
                token=reply, logprob=_finite(oracle_option_logprob(item, reply, self.mode)),
                top_logprobs=[TopLogprob(token=t, logprob=lp) for t, lp in top])])
        choices = [ChatCompletionChoice(
            message=ChatMessageAssistant(content=reply, model=f"ub/{self.mode}", source="generate"),
            stop_reason="stop", logprobs=logprobs, prompt_logprobs=prompt_logprobs) for _ in range(n)]
        n_in = len(prompt.split())
        return ModelOutput(model=f"ub/{self.mode}", choices=choices,
                           usage=ModelUsage(input_tokens=n_in, output_tokens=n, total_tokens=n_in + n))


    def _option_prompt_pairs(self, item: OptionItem, continuation: str) -> list[tuple[str, float]]:
        """The ``prompt_logprobs`` of an option item's prompt followed by ``continuation``, as ``(token,
        logprob)`` pairs: the conditioning text as one "token", then the continuation with its true
        log-probability (both routes: one request per continuation, and many in one)."""
        pairs = [(item.prompt, 0.0)]
        if continuation:
            pairs.append((continuation, _finite(oracle_option_logprob(item, continuation, self.mode))))
        return pairs

    def _candidate_output(self, problem: Problem, continuation: str, prompt: str, n: int) -> ModelOutput:
        """Sampling-free KS@N (``ub_inspect/ksn_logprob``): the prompt followed by a candidate answer gets
        ``prompt_logprobs`` with the candidate's reference log-probability (:mod:`ub_core.logprob.ksn_logprob`); the
        reply is the answer ub/collapse gives."""
        content = [Logprob(token=problem.full_prompt, logprob=0.0)]
        if continuation:
            content.append(Logprob(token=continuation,
                                   logprob=_finite(oracle_candidate_logprob(problem, continuation, self.mode))))
        reply = render_replies(problem, [collapse_value(problem)], 1, self.writer.digits)[0]
        choices = [ChatCompletionChoice(
            message=ChatMessageAssistant(content=reply, model=f"ub/{self.mode}", source="generate"),
            stop_reason="stop", prompt_logprobs=Logprobs(content=content)) for _ in range(n)]
        n_in = len(prompt.split())
        return ModelOutput(model=f"ub/{self.mode}", choices=choices,
                           usage=ModelUsage(input_tokens=n_in, output_tokens=n, total_tokens=n_in + n))


    def _tree_output(self, problem: Problem, prefix: str, prompt: str, n: int, config: GenerateConfig) -> ModelOutput:
        """One token after the prompt and a partial reply (the tree route of ``ub_inspect/ksn_logprob``): the next
        tokens of the reference model's reply law (:func:`ub_core.logprob.oracle_replies.oracle_reply_law`, with
        this model's writer) as ``top_logprobs``, as many as asked (no cap at 20); the token is the most probable
        one."""
        law = oracle_reply_law(problem, self.mode, digits=self.writer.digits,
                               number_token_digits=self.writer.number_token_digits)
        top = law.next_tokens(prefix, int(config.top_logprobs or 1))  # any top_k: a digit position may have 10**K
        token, lp = top[0] if top else (OFFLINE_EOS, 0.0)
        logprobs = Logprobs(content=[Logprob(token=token, logprob=lp,
                                             top_logprobs=[TopLogprob(token=t, logprob=v) for t, v in top])])
        choices = [ChatCompletionChoice(
            message=ChatMessageAssistant(content=token, model=f"ub/{self.mode}", source="generate"),
            stop_reason="max_tokens", logprobs=logprobs) for _ in range(n)]
        n_in = len(prompt.split())
        return ModelOutput(model=f"ub/{self.mode}", choices=choices,
                           usage=ModelUsage(input_tokens=n_in, output_tokens=n, total_tokens=n_in + n))


# Inspect's logs serialise -inf as null, which does not read back as a float: probability 0 is written as a
# log-probability so low that exp() of it is exactly 0.0 in double precision.
_LOG_ZERO = -1.0e4


def _finite(logprob: float) -> float:
    return logprob if logprob > _LOG_ZERO else _LOG_ZERO
