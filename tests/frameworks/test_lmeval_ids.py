"""``--metadata '{"ids": [...]}'`` on the ``ub_ksn`` group: the ids reach all seven
category tasks, so the categories without any of them have no document. lm-eval 0.4 refuses an empty task
(IndexError in its constructor); ``SelectedItemsTask`` runs such a category with no request and the group averages
over the others. A bad ``ids`` type is one clear ValueError."""

from __future__ import annotations

import pytest

pytest.importorskip("lm_eval")

from lm_eval import simple_evaluate  # noqa: E402
from support.lmeval_tasks import ub_task_manager  # noqa: E402

import ub_lmeval  # noqa: E402, F401  (imported for its side effect: registers the ub-* models with lm-eval)
from ub_core.metrics import calibration_item_set
from ub_core.problems import load_bank  # noqa: E402
from ub_lmeval.ksn_hooks import ksn_docs  # noqa: E402

CATEGORIES = ("text_explicit", "text_implicit", "code_explicit", "code_implicit", "multimodal", "real_world",
              "shuffling")


def _ids(category: str, k: int) -> list[str]:
    return [p.id for p in load_bank("ksn", categories=[category])][:k]


def _run_group(ids) -> dict:
    tm = ub_task_manager({"ids": ids})
    return simple_evaluate(model="ub-oracle", tasks=["ub_ksn"], task_manager=tm, log_samples=True)


def _check(res: dict, chosen: dict[str, list[str]]) -> None:
    results = res["results"]
    for cat in CATEGORIES:
        name = f"ub_ksn_{cat}"
        if cat in chosen:
            assert results[name]["ks@100,take_100"] == 1.0
            assert [s["doc"]["id"] for s in res["samples"][name]] == chosen[cat]
        else:  # skipped: no metric, no sample, no request
            assert "ks@100,take_100" not in results.get(name, {})
            assert not res["samples"].get(name)
    assert results["ub_ksn"]["ks@100,take_100"] == 1.0
    assert results["ub_ksn"]["sample_len"] == sum(len(v) for v in chosen.values())


def test_group_ids_from_two_categories():
    chosen = {"text_explicit": _ids("text_explicit", 1), "code_explicit": _ids("code_explicit", 2)}
    _check(_run_group(chosen["code_explicit"] + chosen["text_explicit"]), chosen)


def test_group_ids_from_one_category_as_a_string():
    chosen = {"shuffling": _ids("shuffling", 2)}
    _check(_run_group(",".join(chosen["shuffling"])), chosen)


@pytest.mark.parametrize("bad", [5, 2.5, {"a": 1}, True])
def test_ids_of_a_wrong_type_is_one_clear_error(bad):
    with pytest.raises(ValueError, match=r"^ids: expected a list of item ids or a comma-separated string, got "):
        ksn_docs("text_explicit", bad)


def test_ids_list_of_non_strings_is_compared_as_text():
    with pytest.raises(ValueError, match="ids: not items of ksn or any other bank: 5"):
        ksn_docs(None, [5])


# The plain ``lm_eval`` command (our folder as --include_path) with ids from two categories on the group: checked on
# the plain lm_eval run of tests/frameworks/test_lmeval_plugin.py::test_plain_lm_eval_finds_our_tasks_and_models.
# ``ub-lm-eval`` with ub-oracle and ids of one category (the others skipped with one line): checked on the one
# ub-lm-eval command-line run, tests/frameworks/test_lmeval.py::test_ub_lm_eval_command_line


def test_logit_group_ids_from_one_task():
    """The same on the log-probability groups: ids of the colour task only, through the ``ub_calibration`` group;
    the other two calibration tasks are skipped, the colour task scores the oracle's perfect mass."""
    # the runs leave equal-count items out by default: two items they score
    ids = [it.id for it in calibration_item_set(load_bank("calibration", categories=["colors"]))[0]][:2]
    tm = ub_task_manager({"ids": ids})
    res = simple_evaluate(model="ub-oracle", tasks=["ub_calibration"], task_manager=tm, log_samples=True)
    assert [s["doc"]["id"] for s in res["samples"]["ub_calibration_colors"]] == ids
    assert res["results"]["ub_calibration_colors"]["pm,none"] == pytest.approx(1.0)
    for other in ("ub_calibration_wordproblems", "ub_calibration_distributions"):
        assert not res["samples"].get(other)
        assert "pm,none" not in res["results"].get(other, {})
