"""Shared fixtures."""

from __future__ import annotations

import os

import pytest

# No network at run time (the model hub is unreachable): offline before any test module imports huggingface_hub,
# which reads these once. Online, a model without a local tokenizer (lm-eval's ``dummy`` asks for gpt2's) retries the
# hub with back-off, ~45 s of sleeping, before it falls back. CI sets both too (.ci/run).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


#: fixtures that hand a test the tiny trained model: every test that uses one, directly or through another fixture,
#: is marked ``tiny_model``, so `.ci/run` can run exactly those again against the second shipped model
TINY_MODEL_FIXTURES = ("tiny_trained_model", "tiny_lm")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in TINY_MODEL_FIXTURES):
            item.add_marker(pytest.mark.tiny_model)


@pytest.fixture(scope="session")
def tiny_trained_model():
    """Folder of the tiny trained Llama that ships with the tests (tests/support/tiny_trained.py): ``shipped``
    unless ``$UB_TINY_MODEL`` names another (``second``, or a folder)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from support.tiny_trained import ensure_tiny_trained

    return ensure_tiny_trained()


@pytest.fixture(scope="session")
def tiny_lm(tiny_trained_model):
    """The tiny trained model loaded once per session (tests/support/ancestral.py ``TinyLM``): its sampled reply
    streams are shared, so the two sampling-free validations draw each (problem, seed) stream once."""
    from support.ancestral import TinyLM

    return TinyLM.load(tiny_trained_model)


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory):
    """Folder of a tiny untrained Llama and its tokenizer (tests/support/tiny_model.py), written once per session: the
    tests only read it."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from support.tiny_model import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny_llama"))


@pytest.fixture(scope="session")
def task_manager():
    """lm-eval's ``TaskManager`` over this package's task YAMLs only, built once per session (tests that need task
    metadata call ``support.lmeval_tasks.ub_task_manager(metadata)`` themselves)."""
    pytest.importorskip("lm_eval")
    from support.lmeval_tasks import ub_task_manager

    return ub_task_manager()


@pytest.fixture
def registries(monkeypatch):
    """The distribution-family and template registries restored after the test, so a toy family or template
    registered in a test leaks into no other test. The family registry is one dict that every module of
    ``ub_core.distributions`` holds, so it is restored in place."""
    from ub_core import distributions
    from ub_core.problems.ksn import template_registry

    saved = dict(distributions.FAMILIES)
    monkeypatch.setattr(template_registry, "_TEMPLATES",
                        {k: dict(v) for k, v in template_registry._TEMPLATES.items()})
    yield
    distributions.FAMILIES.clear()
    distributions.FAMILIES.update(saved)


@pytest.fixture
def fast_hf_batching(monkeypatch):
    """Inspect's hf/ provider without its idle waits: it queues each request for a batch thread that closes a batch
    after 2 s without a new request (or at max_connections requests), and each caller polls its result once a
    second, so a solver that sends one request after another (ksn's answer slots: hf/ returns one choice per
    request) waits ~1-3 s per round doing nothing. Here the poll is 20 ms and a batch closes after 50 ms without a
    new request. What is generated is unchanged (the same requests, the same model, batched as they arrive);
    only the waits between rounds shrink. Inspect internals: a version without them leaves the test as it was."""
    import anyio

    try:
        from inspect_ai.model._providers import hf
    except ImportError:  # pragma: no cover - the hf/ provider needs torch and transformers
        return
    if hasattr(hf, "anyio"):
        class _ShortSleeps:
            def __getattr__(self, name):
                return getattr(anyio, name)

            @staticmethod
            async def sleep(delay, *args, **kwargs):
                await anyio.sleep(min(delay, 0.02), *args, **kwargs)

        monkeypatch.setattr(hf, "anyio", _ShortSleeps())
    drain = getattr(hf, "_drain_batches", None)
    if drain is not None:
        monkeypatch.setattr(hf, "_drain_batches", lambda queue, timeout: drain(queue, timeout=min(timeout, 0.05)))
