"""``end_of_answer=eos`` against a model served under an alias: the name the provider sends is
no local tokenizer, so the end token comes from the server (:func:`ub_core.logprob.eos.served_eos_text`): the path
``GET /v1/models`` names as the alias's ``root`` (vLLM), else vLLM's ``GET /tokenizer_info``; else one line naming
``-T end_of_answer=<text>``. The server's replies are untrusted: bounded, timed, one line each."""

from __future__ import annotations

import pytest

from support.stub_openai_server import StubServer
from ub_core.logprob.eos import served_eos_text


def _reply_end_against(server: StubServer, monkeypatch) -> str:
    """``ub_inspect/ksn_logprob``'s reply end with ``openai-api-completions/stub/myalias`` at ``server``."""
    from inspect_ai.model import get_model

    import importlib

    module = importlib.import_module("ub_inspect.ksn_logprob.ksn_logprob")

    model = get_model("openai-api-completions/stub/myalias", base_url=server.base_url, api_key="test-key")
    monkeypatch.setattr(module, "get_model", lambda *a, **k: model)
    return module._reply_end("eos", None)


def test_an_alias_finds_the_end_token_of_the_tokenizer_it_serves(tiny_trained_model, monkeypatch):
    from transformers import AutoTokenizer

    eos = AutoTokenizer.from_pretrained(str(tiny_trained_model), local_files_only=True).eos_token
    with StubServer(served_name="myalias", model_root=str(tiny_trained_model)) as srv:
        assert _reply_end_against(srv, monkeypatch) == eos


def test_tokenizer_info_gives_the_end_token_when_the_root_is_not_local(monkeypatch, tmp_path):
    info = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": {"content": "<|im_end|>", "special": True}}
    with StubServer(served_name="myalias", model_root=str(tmp_path / "elsewhere"), tokenizer_info=info) as srv:
        assert _reply_end_against(srv, monkeypatch) == "<|im_end|>"


def test_nothing_found_is_one_line_naming_the_option(monkeypatch, tmp_path):
    from ub_inspect._options import OptionError

    with StubServer(served_name="myalias") as srv:  # no root, no /tokenizer_info (404, as vLLM by default)
        with pytest.raises(OptionError) as err:
            _reply_end_against(srv, monkeypatch)
    message = str(err.value)
    assert "\n" not in message and "-T end_of_answer=<the text that ends a reply>" in message
    assert "names no root for 'myalias'" in message and "--enable-tokenizer-info-endpoint" in message


@pytest.mark.parametrize("info, why", [
    (b"x" * (2 << 20), "longer than"),           # a body past the bound
    (b"{not json", "not JSON"),
    ({"eos_token": ["</s>"]}, "no eos_token"),    # wrong type
    ({"eos_token": "x" * 1000}, "no eos_token"),  # absurd length
    ([1, 2, 3], "no eos_token"),
], ids=["too-long", "not-json", "wrong-type", "absurd-length", "not-an-object"])
def test_hostile_server_replies_are_one_line(info, why):
    with StubServer(served_name="myalias", tokenizer_info=info) as srv:
        with pytest.raises(ValueError) as err:
            served_eos_text(srv.base_url, "myalias")
    assert why in str(err.value) and "\n" not in str(err.value)


def test_an_unreachable_or_odd_server_is_one_line():
    with pytest.raises(ValueError, match="not an http"):
        served_eos_text("file:///etc/passwd")
    with pytest.raises(ValueError) as err:
        served_eos_text("http://127.0.0.1:9/v1", "myalias", timeout=2)  # port 9 (discard): refused
    assert "GET http://127.0.0.1:9/v1/models" in str(err.value) and "\n" not in str(err.value)


def test_lmeval_reply_ends_ask_the_server_of_local_completions(tiny_trained_model, tmp_path):
    """lm-eval's ``local-completions`` with ``model=myalias,base_url=.../v1/completions`` and a tokenizer name that
    is not local: the end text comes from the server, as ``pretrained=<the path>`` would give it."""
    from ub_lmeval.ksn_logprob_hooks import reply_ends

    want = reply_ends("eos", str(tiny_trained_model))
    with StubServer(served_name="myalias", model_root=str(tiny_trained_model)) as srv:
        got = reply_ends("eos", None, str(tmp_path / "no-tokenizer"), f"{srv.base_url}/completions", "myalias")
    assert got == want and got[0] != ""
