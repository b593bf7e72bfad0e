"""The text that ends a model's reply: one rule for both frameworks.

Sampling-free scoring needs the end of a reply (a candidate followed by it is the whole reply, and a node of the
reply tree whose next token is it is a finished reply). Models mark it with their end-of-sequence token, whose
text (``</s>``, ``<|im_end|>``, ``<|eot_id|>``) a completions server and a tokenizer both read back as that token.
The offline models (``ub/oracle``, ``ub-oracle``, ...) have no tokenizer: their end is :data:`OFFLINE_EOS`.

A model served under an alias (``vllm serve /models/x --served-model-name myalias``, then
``openai-api-completions/myalias``) has no local tokenizer by its name: :func:`served_eos_text` asks the server,
first ``GET /v1/models`` for the path or hub id the alias serves (vLLM's ``root``; its tokenizer is loaded from
local files), then vLLM's ``GET /tokenizer_info`` (served with ``--enable-tokenizer-info-endpoint``) for the
tokenizer's ``eos_token``. Server replies are untrusted: bounded reads, a timeout, one-line errors.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["OFFLINE_EOS", "eos_text", "load_local_tokenizer", "served_eos_text", "served_logprobs", "server_urls"]

#: The most bytes read from a server's ``/v1/models`` or ``/tokenizer_info`` reply.
MAX_SERVER_REPLY_BYTES = 1 << 20
#: Seconds to wait for each of those replies.
SERVER_TIMEOUT_S = 10.0

#: The end-of-sequence text of the offline models (``ub/oracle``, ``ub-oracle``, ...): they have no tokenizer.
OFFLINE_EOS = "</s>"


def load_local_tokenizer(name: str, what: str = "chat_template", trust_remote_code: bool = False):
    """The tokenizer of ``name`` (a local folder or a hub id already in the local cache; nothing is downloaded).
    A one-line ``ValueError`` naming the option ``what`` it was loaded for when it cannot be loaded."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(name), local_files_only=True, trust_remote_code=trust_remote_code)
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the user
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{what}: cannot load the tokenizer {name!r} from local files ({first})") from None


def eos_text(tokenizer: Any = None, name: str | None = None, what: str = "end_of_answer=eos") -> str:
    """The end-of-sequence text of ``tokenizer``, else of the tokenizer of ``name`` (a local folder or a cached
    hub id, :func:`load_local_tokenizer`). A one-line ``ValueError`` naming the option ``what`` when neither is
    given, the tokenizer cannot be loaded, or it has no end-of-sequence token."""
    if tokenizer is None:
        if not name:
            raise ValueError(f"{what}: no tokenizer to read the end-of-sequence token from")
        tokenizer = load_local_tokenizer(str(name), what)
    eos = getattr(tokenizer, "eos_token", None)
    if not isinstance(eos, str) or not eos:
        label = name or getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
        raise ValueError(f"{what}: the tokenizer {label!r} has no end-of-sequence token")
    return eos


def server_urls(base_url: str) -> tuple[str, str]:
    """``(models URL, tokenizer_info URL)`` of an OpenAI-compatible server given its base URL (``.../v1``, or a
    completions endpoint ``.../v1/completions`` as lm-eval's ``base_url``); vLLM serves ``/tokenizer_info``
    beside ``/v1``. A one-line ``ValueError`` for a URL that is not http(s)."""
    parts = urllib.parse.urlsplit(str(base_url).strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"the server URL {base_url!r} is not an http(s) URL")
    path = parts.path.rstrip("/")
    for tail in ("/chat/completions", "/completions"):
        if path.endswith(tail):
            path = path[: -len(tail)]
            break
    root = path[:-3] if path.endswith("/v1") else path
    models = urllib.parse.urlunsplit((parts.scheme, parts.netloc, (path if path.endswith("/v1") else path + "/v1")
                                      + "/models", "", ""))
    info = urllib.parse.urlunsplit((parts.scheme, parts.netloc, root + "/tokenizer_info", "", ""))
    return models, info


def _get_json(url: str, api_key: str | None, timeout: float, max_bytes: int, post: dict | None = None) -> Any:
    """The JSON body of ``GET url`` (``POST`` of the JSON ``post``), read up to ``max_bytes``; a one-line
    ``ValueError`` for anything else."""
    verb = "GET" if post is None else "POST"
    request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                   **({"Content-Type": "application/json"} if post is not None
                                                      else {}),
                                                   **({"Authorization": f"Bearer {api_key}"} if api_key else {})},
                                     data=None if post is None else json.dumps(post).encode())
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310 - http(s) only (server_urls)
            body = reply.read(max_bytes + 1)
    except urllib.error.HTTPError as exc:
        raise ValueError(f"{verb} {url}: HTTP {exc.code}") from None
    except Exception as exc:  # noqa: BLE001 - timeouts, refused connections, bad chunking: one line
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{verb} {url}: {first[:200]}") from None
    if len(body) > max_bytes:
        raise ValueError(f"{verb} {url}: the reply is longer than {max_bytes} bytes")
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"{verb} {url}: the reply is not JSON") from None


def served_logprobs(base_url: str, model: str, api_key: str | None = None, timeout: float = SERVER_TIMEOUT_S,
                    max_bytes: int = MAX_SERVER_REPLY_BYTES) -> dict[str, bool]:
    """What log-probabilities the completions server at ``base_url`` reports for ``model``, from one request of
    one token: ``{"prompt_logprobs": ..., "top_logprobs": ...}`` (vLLM's per-prompt-token ``prompt_logprobs``;
    the top-k list of the generated token, ``logprobs.top_logprobs``). A server that refuses the
    ``prompt_logprobs`` parameter (HTTP 400) is asked again without it. A one-line ``ValueError`` when the server
    does not answer a completions request at all."""
    url = server_urls(base_url)[0].removesuffix("/models") + "/completions"
    body = {"model": model, "prompt": "1", "max_tokens": 1, "temperature": 0, "logprobs": 2}
    try:
        reply = _get_json(url, api_key, timeout, max_bytes, post={**body, "prompt_logprobs": 1})
    except ValueError as exc:
        if "HTTP 400" not in str(exc):
            raise
        reply = _get_json(url, api_key, timeout, max_bytes, post=body)
    choices = reply.get("choices") if isinstance(reply, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    prompt = choice.get("prompt_logprobs")
    top = (choice.get("logprobs") or {}).get("top_logprobs") if isinstance(choice.get("logprobs"), dict) else None
    return {"prompt_logprobs": isinstance(prompt, list) and any(isinstance(x, dict) and x for x in prompt),
            "top_logprobs": isinstance(top, list) and any(isinstance(x, dict) and x for x in top)}


def _token_text(value: Any) -> str | None:
    """A tokenizer config's special token: a string, or a serialised added token ``{"content": ...}``."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value and len(value) <= 256 else None


def served_eos_text(base_url: str, model: str | None = None, api_key: str | None = None,
                    what: str = "end_of_answer=eos", timeout: float = SERVER_TIMEOUT_S,
                    max_bytes: int = MAX_SERVER_REPLY_BYTES) -> str:
    """The end-of-sequence text of the model ``model`` served at ``base_url`` (module docstring): the local
    tokenizer of the path or hub id ``GET /v1/models`` names as its ``root`` (vLLM), else the ``eos_token`` of
    vLLM's ``GET /tokenizer_info``. A one-line ``ValueError`` naming what was tried when neither gives it."""
    models_url, info_url = server_urls(base_url)
    tried: list[str] = []
    try:
        listing = _get_json(models_url, api_key, timeout, max_bytes)
        cards = listing.get("data") if isinstance(listing, dict) else None
        cards = [c for c in cards if isinstance(c, dict)] if isinstance(cards, list) else []
        card = next((c for c in cards if model is not None and c.get("id") == model), None)
        if card is None and len(cards) == 1:
            card = cards[0]
        root = card.get("root") if card is not None else None
        if not isinstance(root, str) or not root or len(root) > 4096:
            tried.append(f"{models_url} names no root for {model!r}")
        else:
            try:
                return eos_text(load_local_tokenizer(root, what), root, what)
            except ValueError as exc:
                tried.append(f"{models_url} serves {root!r}, but {str(exc).removeprefix(what + ': ')}")
    except ValueError as exc:
        tried.append(str(exc))
    try:
        info = _get_json(info_url, api_key, timeout, max_bytes)
        eos = _token_text(info.get("eos_token")) if isinstance(info, dict) else None
        if eos is not None:
            return eos
        tried.append(f"{info_url} gives no eos_token")
    except ValueError as exc:
        tried.append(str(exc) + (" (vllm serve --enable-tokenizer-info-endpoint serves it)"
                                 if "HTTP 404" in str(exc) else ""))
    raise ValueError(f"{what}: the server does not say its end-of-sequence token: {'; '.join(tried)}")
