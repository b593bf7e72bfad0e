"""The tiny trained models that ship with the tests (tests/support/tiny_trained.py, tests/data/tiny_models/).

They ship because training is not bit-reproducible across CPUs: the same source and seeds train a slightly different
model on every machine. So every machine must test the same weights, those weights must be the ones this file's
training inputs produce, and they must meet the training targets that the tiny-model tests derive their thresholds
from (:data:`~support.tiny_trained.TARGET_TOL`). The targets are checked on the model ``$UB_TINY_MODEL`` selects:
`.ci/run` runs this file for both shipped models.
"""

from __future__ import annotations

import json

import pytest

from support.tiny_trained import (NEXT_TOKEN_PROMPTS, TAUGHT_KSN, TARGET_TOL, TRAINED_KSN, VARIANTS, chat_text,
                                  model_dir, outcome_probabilities, training_key, weights_sha256)
from ub_core.problems import get_problem

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_shipped_model_is_the_one_its_training_inputs_produce(variant):
    """The recorded training key is that of this file's training inputs with the variant's seed (a change to the
    documents, config or schedule without a retrain fails here), and the weights are the ones recorded."""
    folder = model_dir(variant)
    done = json.loads((folder / "done.json").read_text())
    assert (done["seed"], done["threads"]) == (VARIANTS[variant]["seed"], VARIANTS[variant]["threads"])
    assert done["key"] == training_key(done["seed"]), (
        f"{folder} was trained from other inputs: run `python tests/support/tiny_trained.py --retrain`")
    assert weights_sha256(folder) == done["sha256"], f"{folder}/model.safetensors is not the file that was trained"
    # no model beats the weighted entropy of its targets; float32 sums may land a hair below it
    assert done["final_loss"] >= done["minimum_loss"] - 1e-5, done


def test_the_shipped_models_differ_in_seed_threads_and_weights():
    """The second model is a hunter only if it learnt other numbers: another seed, another thread count, other
    weights."""
    done = {v: json.loads((model_dir(v) / "done.json").read_text()) for v in VARIANTS}
    for field in ("seed", "threads", "sha256"):
        assert len({d[field] for d in done.values()}) == len(done), field


def _targets() -> list[tuple[str, str, dict[str, float]]]:
    """(label, prompt, {continuation: target probability}) for everything the model was trained on."""
    out = []
    for pid, answers in TRAINED_KSN.items():
        out.append((pid, get_problem(pid).full_prompt, {" {" + a + "}": p for a, p in answers.items()}))
    for pid, replies in TAUGHT_KSN.items():
        out.append((pid, get_problem(pid).full_prompt, dict(replies)))
    for name, item in NEXT_TOKEN_PROMPTS.items():
        out.append((name, item["prompt"], dict(item["outcomes"])))
    return out


@pytest.fixture(scope="module")
def loaded(tiny_trained_model):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_trained_model)
    return tok, AutoModelForCausalLM.from_pretrained(tiny_trained_model, dtype=torch.float32).eval()


@pytest.mark.parametrize("chat", [False, True], ids=["raw", "chat"])
@pytest.mark.parametrize("bos", [True, False], ids=["bos", "nobos"])
def test_the_model_meets_its_training_targets(loaded, chat, bos):
    """Every trained continuation's exact probability (its tokens, then EOS after a ksn reply), in every form the
    routes send, lies within TARGET_TOL of its target: the promise the tiny-model tests build their thresholds on."""
    tok, model = loaded
    worst, lines = 0.0, []
    for label, prompt, targets in _targets():
        got = outcome_probabilities(model, tok, chat_text(prompt) if chat else prompt, list(targets), bos=bos)
        for cont, p in targets.items():
            worst = max(worst, abs(got[cont] - p))
            lines.append(f"{label} {cont!r}: {got[cont]:.4f} (target {p:.4f})")
    print("\n".join(lines))
    assert worst <= TARGET_TOL, "\n".join(lines)
