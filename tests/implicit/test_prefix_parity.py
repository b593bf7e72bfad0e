"""One definition of an outcome's probability in both frameworks and every mode.

Where one outcome's text begins another's (dice ``1`` and ``12``) a digit-splitting tokenizer makes the joint
probability of ``" 1"``'s tokens include ``" 12"``'s. lm-eval with a local tokenizer subtracted it and Inspect did
not (Chebyshev 0.167 vs 0.0 on a synthetic case). Now both compute the probability that the reply *is* the outcome
by default (``convention="exclusive"``) and the literal joint probability with ``convention="paper"``; this test
serves one synthetic model (``tests/support/digit_lm.py``) to lm-eval, to Inspect (``prompt_logprobs`` and
``top_logprobs``) and to a direct computation, over subset dice items where a variant is a text prefix of
another option's (one per option set, five sets), and demands the same numbers (to float summation order, 1e-12).
"""

from __future__ import annotations

import math
from importlib.util import find_spec

import numpy as np
import pytest

from ub_core.logprob.option_logprob import (exclusive_probabilities, flatten_variants, option_mass, score_row,
                                    unresolved_prefixes)
from ub_core.problems import OptionItem, load_bank

# checked without importing them: transformers takes seconds to import, paid by every collecting worker otherwise
pytestmark = pytest.mark.skipif(find_spec("transformers") is None or find_spec("tokenizers") is None,
                                reason="needs transformers and tokenizers (bash scripts/test.sh installs them)")

KEYS = ("chebyshev", "manhattan", "kl", "missing_mass", "argmax_acc")
TOL = 1e-12


def _prefix_items(size: str = "subset") -> list[OptionItem]:
    """The implicit items where one option's variant is a text prefix of another option's (dice sums)."""
    out = []
    for item in load_bank("implicit", size=size):
        choices, owners = flatten_variants(item)
        if any(w != v and ow != ov and w.startswith(v) for v, ov in zip(choices, owners)
               for w, ow in zip(choices, owners)):
            out.append(item)
    return out


@pytest.fixture(scope="module")
def digit_lm(tmp_path_factory):
    from support.digit_lm import load
    from support.tiny_model import build_tiny_tokenizer

    path = tmp_path_factory.mktemp("digit_tokenizer")
    build_tiny_tokenizer(path)
    return path, load(path)


@pytest.fixture(scope="module")
def items():
    """One item per distinct option set among the affected items, the five smallest of the 10 sets (10 to 28
    outcomes; the full bank's 525 affected items use the same sets): the checks cost one request per variant and
    Inspect's per-request overhead dominates."""
    found = _prefix_items()
    assert found and {i.category for i in found} == {"dice", "dice_shown"}
    found = [i for i in found if i.category == "dice"]  # one lm-eval task serves them
    first: dict[tuple, OptionItem] = {}
    for item in found:
        first.setdefault(item.options, item)
    return sorted(first.values(), key=lambda i: len(i.options))[:5]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


def test_exclusive_and_paper_differ_on_a_hand_case():
    """Outcomes 1 and 12 under a digit-splitting tokenizer: P(" 1") = 0.5 holds P(" 12") = 0.1 too. Exclusive:
    masses (0.4, 0.1), missing 0.5; paper: (0.5, 0.1), missing 0.4 (hand computation)."""
    item = OptionItem(id="t", bank="implicit", category="dice", cluster="c", family="f", params={}, prompt="p",
                      options=("1", "12"), probabilities=(0.5, 0.5))
    lps = {" 1": math.log(0.5), " 12": math.log(0.1)}
    ids = {" 1": (5, 1), " 12": (5, 1, 2)}
    assert option_mass(item, lps, ids) == pytest.approx([0.4, 0.1], abs=1e-15)
    assert option_mass(item, lps, ids, convention="paper") == pytest.approx([0.5, 0.1], abs=1e-15)
    assert score_row(item, option_mass(item, lps, ids))["missing_mass"] == pytest.approx(0.5)
    assert unresolved_prefixes(item, lps, ids) == 0 and unresolved_prefixes(item, lps) == 1
    # a tokenizer that keeps "12" whole: the two tokenizations begin no other, both conventions agree
    whole = {" 1": (5, 1), " 12": (5, 12)}
    assert list(option_mass(item, lps, whole)) == list(option_mass(item, lps, whole, convention="paper"))
    assert exclusive_probabilities([(1,), (1, 2), (1, 2, 3)], [0.5, 0.2, 0.05]) == pytest.approx([0.3, 0.15, 0.05])
    with pytest.raises(ValueError, match="convention"):
        option_mass(item, lps, ids, convention="literal")


def _lmeval_rows(path, lm, items, convention):
    from lm_eval import simple_evaluate

    from support.digit_lm import lmeval_model
    from support.lmeval_tasks import ub_task_manager

    tm = ub_task_manager({"tokenizer": str(path), "ids": ",".join(i.id for i in items), "convention": convention})
    res = simple_evaluate(model=lmeval_model(lm), tasks=["ub_implicit_dice"], task_manager=tm, log_samples=True)
    out = {}
    for s in res["samples"]["ub_implicit_dice"]:
        assert s["doc"]["dedup"] == "token_ids" and s["doc"]["convention"] == convention
        out[s["doc"]["id"]] = {**{k: float(s[k]) for k in KEYS}, "option_mass": s["doc"]["ub_sample"]["option_mass"],
                               "prefix_unresolved": s["prefix_unresolved"]}
    return out, res["results"]["ub_implicit_dice"]


def _inspect_rows(model, items, mode, convention, log_dir):
    from inspect_ai import eval as inspect_eval

    from ub_inspect.implicit import implicit

    (log,) = inspect_eval(implicit(ids=",".join(i.id for i in items), mode=mode, convention=convention),
                          model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    out = {}
    for s in log.samples:
        sc = s.scores["implicit_scorer"]
        ub = sc.metadata["ub"]
        assert ub["prefix_unresolved"] == 0 and ub["multi_token_variants"] == 0 and ub["convention"] == convention
        out[s.id] = {**{k: float(sc.value[k]) for k in KEYS}, "option_mass": ub["option_mass"]}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("convention", ["exclusive", "paper"])
def test_lmeval_inspect_and_core_agree_on_digit_tokenizer(digit_lm, items, convention, tmp_path):
    from support.digit_lm import register_inspect_provider, reply_is_option_mass

    path, lm = digit_lm
    reference = {}
    for item in items:
        mass = reply_is_option_mass(lm, item, convention)
        reference[item.id] = {**score_row(item, mass), "option_mass": mass}
    lm_rows, lm_results = _lmeval_rows(path, lm, items, convention)
    model = register_inspect_provider(lm)
    routes = {"lm-eval": lm_rows,
              "inspect prompt_logprobs": _inspect_rows(model, items, "prompt_logprobs", convention, tmp_path / "p"),
              "inspect top_logprobs": _inspect_rows(model, items, "top_logprobs", convention, tmp_path / "t")}
    assert lm_results["prefix_unresolved,none"] == 0
    for name, rows in routes.items():
        assert set(rows) == set(reference), name
        for item_id, ref in reference.items():
            got = rows[item_id]
            assert all(_same(a, b) for a, b in zip(got["option_mass"], ref["option_mass"])), (name, item_id)
            for key in KEYS:
                assert _same(got[key], ref[key]), (name, item_id, key, got[key], ref[key])
    # the two conventions are not the same numbers on these items (the test would pass vacuously otherwise)
    other = "paper" if convention == "exclusive" else "exclusive"
    differ = sum(not np.allclose(reply_is_option_mass(lm, i, other), reference[i.id]["option_mass"], atol=1e-9)
                 for i in items)
    assert differ >= len(items) // 2, differ


def test_lmeval_without_tokenizer_counts_unresolved_items(items):
    """Without token ids the exclusive reading cannot be applied: the item is scored as given and counted."""
    from ub_lmeval.option_logprob_hooks import option_logprob_docs, process_results_option_logprob

    item = items[0]
    (doc,) = option_logprob_docs("implicit", "dice", ids=item.id)
    assert doc["dedup"] == "string"
    row = process_results_option_logprob(doc, [(math.log(0.01), False)] * len(doc["choices"]))
    assert row["prefix_unresolved"] == 1.0
    (paper,) = option_logprob_docs("implicit", "dice", ids=item.id, convention="paper")
    assert process_results_option_logprob(paper, [(math.log(0.01), False)] * len(doc["choices"]))[
        "prefix_unresolved"] == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("size, count", [("subset", 134)])  # ("full", 525) passes too, in about 2 CPU minutes
def test_every_affected_item_agrees(digit_lm, monkeypatch, size, count):
    """Every item of the edition where a variant is a text prefix of another option's (dice and dice_shown sums):
    lm-eval's process_results on documents built with the tokenizer, the Inspect solver's two reading routes and
    scorer (without the eval harness: its model is served directly), and the direct computation agree."""
    import asyncio

    from inspect_ai.model import ModelName
    from inspect_ai.solver import TaskState

    import ub_inspect.option_logprob as iol
    from support.digit_lm import DirectModel, reply_is_option_mass
    from ub_lmeval.option_logprob_hooks import option_logprob_docs, process_results_option_logprob

    path, lm = digit_lm
    items = _prefix_items(size)
    assert len(items) == count and {i.category for i in items} == {"dice", "dice_shown"}
    monkeypatch.setattr(iol, "get_model", lambda: DirectModel(lm))
    wanted = {i.id for i in items}
    docs = {}
    for category in ("dice", "dice_shown"):
        docs.update({d["id"]: d for d in option_logprob_docs("implicit", category, size=size,
                                                               tokenizer=lm.tokenizer) if d["id"] in wanted})
    assert set(docs) == wanted
    scorer = iol.implicit_scorer()
    for item in items:
        reference = score_row(item, reply_is_option_mass(lm, item))
        doc = docs[item.id]
        ctx = lm.encode(item.prompt)
        results = [(lm.sequence_logprob(ctx, ids), False) for ids in doc["choice_token_ids"]]
        lm_row = process_results_option_logprob(doc, results)
        for mode in ("prompt_logprobs", "top_logprobs"):
            state = TaskState(model=ModelName("ubdigitlm/digits"), sample_id=item.id, epoch=1, input=item.prompt,
                              messages=[], metadata={"ub": item.to_record(), "cluster": item.cluster})
            state = asyncio.run(iol.option_logprobs(mode)(state, None))
            value = asyncio.run(scorer(state, None)).value
            for key in KEYS:
                assert _same(value[key], reference[key]), (mode, item.id, key)
        for key in KEYS:
            assert _same(float(lm_row[key]), reference[key]), ("lm-eval", item.id, key)
