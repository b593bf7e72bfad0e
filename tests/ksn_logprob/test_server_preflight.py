"""A served model whose server cannot give what sampling-free scoring reads is refused before the run, with one
line and a non-zero exit (not one problem's error stopping the run with a traceback, "no samples completed",
and exit status 0, which is what Inspect's ``inspect eval`` gives once a run has started)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.stub_openai_server import Reply, StubServer  # noqa: E402

from ub_core.logprob.eos import served_logprobs

INSPECT = shutil.which("inspect") or str(Path(sys.executable).with_name("inspect"))


def _inspect(srv: StubServer, tmp_path: Path, *task_args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "STUB_BASE_URL": srv.base_url, "STUB_API_KEY": "none"}
    args = [INSPECT, "eval", "ub_inspect/ksn_logprob", "--model", "openai-api-completions/stub/tiny",
            "--log-dir", str(tmp_path / "logs"), "--display", "plain", "-T", "end_of_answer=</s>"]
    for a in task_args:
        args += ["-T", a]
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)


def _vllm_like(prompt: bool, top: bool) -> Reply:
    """A scripted answer to the probe: what vLLM's completions server sends when it reports ``prompt`` (per
    prompt token) and ``top`` (the generated token's top-k list) log-probabilities."""
    def body(out: dict) -> dict:
        for choice in out["choices"]:
            if prompt:
                choice["prompt_logprobs"] = [None, {"17": {"logprob": -2.5, "rank": 3, "decoded_token": "1"}}]
            if top:
                choice["logprobs"] = {"tokens": ["2"], "token_logprobs": [-0.1], "text_offset": [1],
                                      "top_logprobs": [{"2": -0.1, "3": -2.4}]}
        return out
    return Reply(200, body)


@pytest.mark.parametrize("prompt, top", [(True, True), (True, False), (False, True), (False, False)])
def test_the_probe_reads_what_the_server_reports(prompt, top):
    with StubServer(replies=[_vllm_like(prompt, top)]) as srv:
        assert served_logprobs(srv.base_url, "tiny") == {"prompt_logprobs": prompt, "top_logprobs": top}
        assert len(srv.requests) == 1 and srv.requests[0]["max_tokens"] == 1


def test_a_server_that_refuses_prompt_logprobs_is_asked_again_without():
    refuse = Reply(400, b'{"error": {"message": "unknown parameter prompt_logprobs"}}')
    with StubServer(replies=[refuse, _vllm_like(False, True)]) as srv:
        assert served_logprobs(srv.base_url, "tiny") == {"prompt_logprobs": False, "top_logprobs": True}
        assert "prompt_logprobs" in srv.requests[0] and "prompt_logprobs" not in srv.requests[1]


class _CompletionsAPI:
    """Stands for Inspect's completions providers (``OpenAICompatibleCompletionsAPI``, ``VLLMCompletionsAPI``)."""

    def __init__(self, base_url: str) -> None:
        self.base_url, self.api_key = base_url, "none"

    def service_model_name(self) -> str:
        return "tiny"


_CompletionsAPI.__name__ = "OpenAICompatibleCompletionsAPI"


@pytest.mark.parametrize("prompt, top, enumeration, routes, refused", [
    (True, True, "auto", ("listed", "tree"), None),
    (True, False, "auto", ("listed", "tree"), "1 of the 2 problems need the reply tree"),
    (True, False, "listed", ("listed",), None),
    (False, True, "auto", ("listed", "tree"), None),  # the listed problems take the tree (learnt in the run)
    (False, True, "listed", ("listed",), "the listed route reads prompt_logprobs"),
    (False, False, "tree", ("tree",), "neither prompt_logprobs nor top_logprobs"),
])
def test_the_preflight_refuses_exactly_the_runs_the_server_cannot_serve(monkeypatch, prompt, top, enumeration,
                                                                        routes, refused):
    from types import SimpleNamespace

    import importlib

    task_module = importlib.import_module("ub_inspect.ksn_logprob.ksn_logprob")
    from ub_inspect._options import OptionError

    with StubServer(replies=[_vllm_like(prompt, top)]) as srv:
        model = SimpleNamespace(api=_CompletionsAPI(srv.base_url), name="stub/tiny")
        monkeypatch.setattr(task_module, "get_model", lambda: model)
        monkeypatch.setattr(task_module, "built_inside_eval", lambda: True)
        monkeypatch.setattr(task_module, "_reply_end", lambda end, tok: "</s>")
        args = (None, "eos", enumeration, {f"p{i}": r for i, r in enumerate(routes)})
        if refused is None:
            task_module._preflight(*args)
        else:
            with pytest.raises(OptionError, match=refused):
                task_module._preflight(*args)


def test_a_run_the_server_cannot_serve_is_refused_in_one_line_with_exit_1(tmp_path):
    with StubServer(replies=[_vllm_like(True, False)]) as srv:
        run = _inspect(srv, tmp_path, "ids=te-bernoulli-spread,ce-dirichlet-spread")
        generations = srv.requests[1:]
    assert run.returncode == 1, (run.stdout[-1500:], run.stderr[-1500:])
    text = (run.stdout + run.stderr).strip()
    assert "Traceback" not in text and "1 of the 2 problems need the reply tree" in text, text[-1500:]
    assert "-T enumeration=listed" in text and not generations  # refused before any problem's request


def test_a_model_without_a_tokenizer_is_refused_before_the_run(tmp_path):
    run = subprocess.run([INSPECT, "eval", "ub_inspect/ksn_logprob", "--model", "mockllm/model", "-T",
                          "ids=te-bernoulli-spread", "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    text = (run.stdout + run.stderr).strip()
    assert run.returncode == 1 and "Traceback" not in text and "end_of_answer" in text, text[-1500:]


def test_a_task_built_before_eval_is_not_judged_by_a_stale_model(monkeypatch):
    """The Python API builds the task object first: the active model is then whatever an earlier run left (a CI
    run found the preflight judging ``srvb/collapsed``, left by another test's eval). Only a task Inspect's own
    loader builds, with the run's model active, is checked before the run."""
    import importlib
    from types import SimpleNamespace

    task_module = importlib.import_module("ub_inspect.ksn_logprob.ksn_logprob")
    stale = SimpleNamespace(api=_CompletionsAPI("http://127.0.0.1:9/v1"), name="srvb/collapsed")
    monkeypatch.setattr(task_module, "get_model", lambda: stale)
    task_module._preflight(None, "eos", "auto", {"p": "tree"})  # not inside eval(): nothing is judged
    from ub_inspect._inspect_private import built_inside_eval

    assert built_inside_eval() is False
