"""Our lm-eval models feed lm-eval's own progress bar, as lm-eval's models do (a ``tqdm`` over the requests that
``disable_tqdm`` turns off): ``ub-oracle`` / ``ub-collapse`` for generation and log-likelihood requests, the
served ``ub-openai-*`` models for generation requests (one tick per request, a document's repeats at once when
their one ``n=N`` request returns). Without it a run of our models prints nothing between "Running loglikelihood
requests" and the results, however long it takes."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("lm_eval")

from ub_core.problems import get_problem, load_bank  # noqa: E402
from ub_lmeval.models import UBCollapseLM, UBOracleLM  # noqa: E402


class _Req:  # the slice of lm-eval's Instance that the models read
    def __init__(self, *args):
        self.args = args


def _final_count(err: str, desc: str) -> tuple[int, int]:
    frames = [line for line in re.split(r"[\r\n]", err) if desc in line]
    assert frames, err[-1000:]
    done, total = re.search(r"(\d+)/(\d+)", frames[-1]).groups()
    return int(done), int(total)


@pytest.mark.parametrize("model_cls", [UBOracleLM, UBCollapseLM])
def test_the_offline_models_draw_lm_evals_progress_bar(model_cls, capsys):
    problems = [p for p in load_bank("ksn")][:3]
    gen = [_Req(p.full_prompt, {"until": ["\n\n"]}) for p in problems for _ in range(4)]  # repeats, grouped
    lm = model_cls()
    assert len(lm.generate_until(gen)) == 12
    assert _final_count(capsys.readouterr().err, "Running generate_until requests") == (12, 12)
    ll = [_Req(p.full_prompt, " 1") for p in problems]
    assert len(lm.loglikelihood(ll)) == 3
    assert _final_count(capsys.readouterr().err, "Running loglikelihood requests") == (3, 3)
    lm.generate_until(gen, disable_tqdm=True)
    lm.loglikelihood(ll, disable_tqdm=True)
    assert "requests" not in capsys.readouterr().err  # lm-eval's switch (other ranks, nested calls) is honoured


def test_the_served_models_draw_lm_evals_progress_bar(capsys):
    pytest.importorskip("aiohttp")
    from support.stub_openai_server import StubServer

    from ub_lmeval.openai_models import UBOpenAICompletions

    prompts = [get_problem(i).full_prompt for i in ("te-bernoulli-spread", "te-normal-conc")]
    gk = {"until": ["\n\n"], "do_sample": True, "temperature": 1.0, "max_gen_toks": 8}
    with StubServer() as srv:
        lm = UBOpenAICompletions(base_url=srv.base_url + "/completions", model="tiny", tokenizer_backend=None,
                                 tokenized_requests=False, retry_backoff=0.01)
        out = lm.generate_until([_Req(p, gk) for p in prompts for _ in range(5)])
    assert len(out) == 10 and len(srv.requests) == 2  # one n=5 request per document
    assert _final_count(capsys.readouterr().err, "Requesting API") == (10, 10)
