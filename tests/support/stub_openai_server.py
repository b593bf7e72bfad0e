"""A stand-in OpenAI-compatible server for tests and the serving benchmark: ``/v1/completions``,
``/v1/chat/completions``, ``/v1/models`` (with vLLM's ``root`` when given) and vLLM's ``/tokenizer_info`` (when
given), enough for lm-eval's API models, Inspect's ``openai-api/`` and
``vllm/`` providers and the ``openai`` client.

Answers are the Random Machine's (``ub_core.oracle``): true draws of the KS@N problem whose text starts the
prompt (chat: the last user message), seeded by the request's ``seed`` and a per-server request counter, so KS@N
scores are meaningful (the right distribution scores KS@100 = 1). ``answer="collapse"`` always answers the mode /
median instead. Every request body is recorded (``server.requests``); ``GET /v1/stub/stats`` gives the counts of
requests and choices served.

Faults, for the retry / top-up tests: ``fail_first=K`` with ``failure="5xx"`` (HTTP 503), ``"truncated"``
(a cut JSON body with status 200) or ``"slow"`` (the answer after ``slow_s`` seconds) for the first K generation
requests; ``max_choices=M`` returns at most M choices whatever ``n`` asks; ``extra_choices=E`` returns E
more than asked.

Hostile answers, for the tests of ``tests/hostile/``: ``replies=[Reply(...), ...]`` answers the first generation
requests with those instead (a status, headers, a fixed body, a function of the completion the server would have
sent, or a chunked body that may never end); ``server.arrivals`` holds each request's arrival time.

Log-probabilities, for the option-logprob tasks (calibration, implicit, explicit), from the reference model of
``ub_core.logprob.option_logprob_oracle`` (``logprobs="oracle"``, or ``"collapse"``; each option's canonical variant
``" " + option`` is one token): a chat request with ``logprobs: true, top_logprobs: k`` gets the OpenAI-format
first-token list (the item found from the prompt); a completions request with vLLM's ``prompt_logprobs`` gets vLLM's
per-prompt-token list, the prompt as one token followed by the continuation after the item's prompt as one token, with
its reference log-probability. A prompt that is no item's gets no log-probabilities.

    with StubServer() as srv:           # a thread on 127.0.0.1, a free port
        srv.base_url                    # http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

from ub_core.oracle import collapse_value, find_problem, oracle_replies, render_value
from ub_core.logprob.option_logprob_oracle import (find_option_item, oracle_option_logprob, oracle_top_logprobs,
                                           split_option_text)

__all__ = ["StubServer", "Reply"]


@dataclass
class Reply:
    """A scripted answer to one generation request. ``body``: bytes sent as they are, or a function of the
    completion the server would have sent (a dict) returning bytes or a JSON-able object. ``chunks``: a function
    returning an iterable of bytes sent with chunked transfer encoding instead (it may never end: sending stops
    when the client hangs up)."""

    status: int = 200
    body: bytes | Callable[[dict], Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Callable[[], Iterable[bytes]] | None = None


def _prompt_text(body: dict) -> str:
    if "messages" in body:
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        content = users[-1]["content"] if users else ""
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)
    prompt = body.get("prompt", "")
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    return str(prompt)


def _token(text: str, logprob: float) -> dict:
    return {"token": text, "logprob": logprob, "bytes": list(text.encode())}


def _chat_logprobs(body: dict, mode: str) -> dict | None:
    """OpenAI chat ``logprobs`` for a one-token answer: the item's first-token top-k list."""
    item = find_option_item(_prompt_text(body))
    if item is None:
        return None
    top = oracle_top_logprobs(item, mode, k=int(body.get("top_logprobs") or 1))
    return {"content": [{**_token(*top[0]), "top_logprobs": [_token(t, lp) for t, lp in top]}]}


def _prompt_logprobs(body: dict, mode: str) -> list | None:
    """vLLM's ``prompt_logprobs``: per prompt token ``{token_id: {logprob, rank, decoded_token}}`` (``None``
    for the first); here the item's prompt is one token and the continuation another."""
    hit = split_option_text(_prompt_text(body))
    if hit is None:
        return None
    item, continuation = hit
    out: list = [None, {"1": {"logprob": -1.0, "rank": 1, "decoded_token": item.prompt}}]
    if continuation:
        lp = oracle_option_logprob(item, continuation, mode)
        out.append({"2": {"logprob": lp if lp > -math.inf else -9999.0, "rank": 1, "decoded_token": continuation}})
    return out


class StubServer:
    def __init__(self, *, answer: str = "oracle", fail_first: int = 0, failure: str = "5xx",
                 max_choices: int | None = None, extra_choices: int = 0, slow_s: float = 5.0, host: str = "127.0.0.1",
                 port: int = 0,
                 record: bool = True, logprobs: str = "oracle", replies: Iterable[Reply] = (),
                 served_name: str = "tiny", model_root: str | None = None,
                 tokenizer_info: Any = None) -> None:
        if answer not in ("oracle", "collapse"):
            raise ValueError(f"answer must be oracle or collapse, not {answer!r}")
        if failure not in ("5xx", "truncated", "slow"):
            raise ValueError(f"failure must be 5xx, truncated or slow, not {failure!r}")
        if logprobs not in ("oracle", "collapse"):
            raise ValueError(f"logprobs must be oracle or collapse, not {logprobs!r}")
        self.logprobs = logprobs
        # GET /v1/models lists ``served_name`` (with vLLM's ``root``, the path it serves, when given); GET
        # /tokenizer_info answers ``tokenizer_info`` (a JSON-able object, or bytes sent as they are), else 404 as
        # vLLM without --enable-tokenizer-info-endpoint
        self.served_name, self.model_root, self.tokenizer_info = served_name, model_root, tokenizer_info
        self.answer, self.fail_first, self.failure = answer, int(fail_first), failure
        self.max_choices, self.extra_choices = max_choices, int(extra_choices)
        self.slow_s, self.record = float(slow_s), record
        self.replies = list(replies)
        self.arrivals: list[float] = []  # time.monotonic() of each generation request
        self.requests: list[dict] = []  # every generation request body, in arrival order
        self.failed: list[int] = []  # indices (in ``requests``) of the requests answered with a fault
        self.served = {"requests": 0, "choices": 0}  # counted even with record=False (GET /v1/stub/stats)
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "StubServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "StubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---------------------------------------------------------------------------------------- answering
    def _texts(self, body: dict, n: int, serial: int) -> list[str]:
        problem = find_problem(_prompt_text(body))
        if problem is None:
            return ["I cannot tell which problem this is."] * n
        if self.answer == "collapse":
            return [render_value(problem, collapse_value(problem))] * n
        seed = body.get("seed")
        # the request counter keeps requests with the same seed (top-ups, lm-eval's fixed seed) independent
        return oracle_replies(problem, n, seed=(int(seed) if seed is not None else 0) * 1_000_003 + serial)

    def respond(self, path: str, body: dict) -> tuple[int, bytes] | Reply:
        chat = path.endswith("/chat/completions")
        n = int(body.get("n") or 1)
        with self._lock:
            serial = next(self._counter)
            self.arrivals.append(time.monotonic())
            if self.record:
                self.requests.append(body)
            scripted = self.replies[serial] if serial < len(self.replies) else None
            fault = serial < self.fail_first and scripted is None
            self.served["requests"] += 1
            if fault or scripted is not None:
                self.failed.append(serial)
        if scripted is not None and not callable(scripted.body):
            return scripted
        if fault and self.failure == "5xx":
            return 503, b'{"error": {"message": "stand-in server: overloaded", "code": 503}}'
        if fault and self.failure == "slow":
            time.sleep(self.slow_s)
        k = (n if self.max_choices is None else min(n, self.max_choices)) + self.extra_choices
        texts = self._texts(body, k, serial)
        with self._lock:
            self.served["choices"] += k
        if chat:
            lps = _chat_logprobs(body, self.logprobs) if body.get("logprobs") else None
            if lps is not None:  # a one-token answer: the most probable option
                texts = [lps["content"][0]["token"]] * k
            choices = [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop",
                        "logprobs": lps} for i, t in enumerate(texts)]
        else:
            plps = _prompt_logprobs(body, self.logprobs) if body.get("prompt_logprobs") else None
            choices = [{"index": i, "text": t, "finish_reason": "stop", "logprobs": None,
                        **({"prompt_logprobs": plps} if plps is not None else {})}
                       for i, t in enumerate(texts)]
        out = {"id": f"stub-{serial}", "object": "chat.completion" if chat else "text_completion",
               "created": int(time.time()), "model": body.get("model", "stub"), "choices": choices,
               "usage": {"prompt_tokens": 10, "completion_tokens": 3 * k, "total_tokens": 10 + 3 * k}}
        if scripted is not None:  # a function of this completion
            got = scripted.body(out)
            data = got if isinstance(got, bytes) else json.dumps(got).encode()
            return Reply(scripted.status, data, scripted.headers)
        data = json.dumps(out).encode()
        if fault and self.failure == "truncated":
            data = data[: len(data) // 2]
        return 200, data

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, data: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _send_chunked(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    for chunk in reply.chunks():
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):  # the client hung up: what a bounded reader does
                    self.close_connection = True

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/stub/stats"):
                    with server._lock:
                        self._send(200, json.dumps(server.served).encode())
                elif self.path.rstrip("/").endswith("/models"):
                    card = {"id": server.served_name, "object": "model", "owned_by": "stub"}
                    if server.model_root is not None:
                        card["root"] = server.model_root
                    self._send(200, json.dumps({"object": "list", "data": [card]}).encode())
                elif self.path.rstrip("/") == "/tokenizer_info" and server.tokenizer_info is not None:
                    info = server.tokenizer_info
                    self._send(200, info if isinstance(info, bytes) else json.dumps(info).encode())
                elif self.path.rstrip("/") in ("/health", "/v1/health"):
                    self._send(200, b"{}")
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith(("/completions",)):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, b'{"error": {"message": "body is not JSON"}}')
                    return
                got = server.respond(self.path, body)
                if isinstance(got, Reply):
                    if got.chunks is not None:
                        self._send_chunked(got)
                    else:
                        self._send(got.status, got.body, got.headers)
                    return
                self._send(*got)

        return Handler


if __name__ == "__main__":  # pragma: no cover - manual use: python tests/support/stub_openai_server.py
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()
    srv = StubServer(host=args.host, port=args.port, record=False).start()
    print(srv.base_url, flush=True)
    threading.Event().wait()
