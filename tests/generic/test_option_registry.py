"""One option vocabulary (``ub_core.option_registry``) read by every front door: Inspect's task
signatures and checks, lm-eval's ``--metadata`` (the hooks and the run's precheck), and the CLI's help. Each test
iterates over every family and option of the registry, so a new option is checked at every door by adding it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from ub_core import option_registry as registry
from ub_core.options import OptionValueError

from ub_inspect.calibration import calibration
from ub_inspect.dice import dice
from ub_inspect.dice_mcq import dice_mcq
from ub_inspect.explicit import explicit
from ub_inspect.implicit import implicit
from ub_inspect.ksn import ksn
from ub_inspect.ksn_logprob import ksn_logprob
from ub_inspect.odds import odds
from ub_inspect.stability import stability
from ub_inspect._options import OptionError

ROOT = Path(__file__).resolve().parents[2]

TASKS = {"ksn": ksn, "ksn_logprob": ksn_logprob, "calibration": calibration, "implicit": implicit,
         "explicit": explicit, "odds": odds, "stability": stability, "dice": dice, "dice_mcq": dice_mcq}


def _signature(task):
    return inspect.signature(getattr(task, "__wrapped__", task)).parameters


def _same_default(a, b):
    return (list(a) == list(b)) if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) else a == b


def test_every_inspect_task_is_in_the_registry():
    """Every task this package registers with Inspect has its family here, and this test's table has them all."""
    import ub_inspect._registry  # noqa: F401
    from inspect_ai._util.registry import registry_find, registry_info

    registered = {registry_info(t).name.split("/", 1)[1] for t in registry_find(lambda i: i.type == "task")
                  if registry_info(t).name.startswith("ub_inspect/")}
    assert registered == set(TASKS) == set(registry.FAMILIES)


@pytest.mark.parametrize("family", sorted(registry.FAMILIES))
def test_an_inspect_task_takes_exactly_its_registry_options_with_their_defaults(family):
    params = _signature(TASKS[family])
    options = registry.family_options(family, "inspect")
    assert list(params) and set(params) == set(options)
    for name, opt in options.items():
        assert _same_default(params[name].default, opt.default), (family, name, params[name].default, opt.default)
        assert opt.help, (family, name)


@pytest.mark.parametrize("family", sorted(registry.FAMILIES))
def test_an_inspect_tasks_docstring_is_the_registrys(family):
    """Each task states its options once, in the registry: the docstring Inspect and ``help()`` show is built
    from it, and names every option in the order of the signature."""
    task = getattr(TASKS[family], "__wrapped__", TASKS[family])
    assert task.__doc__ == registry.task_docstring(family)
    named = [line.split(":", 1)[0].strip() for line in task.__doc__.split("Args:\n", 1)[1].splitlines()
             if line.startswith("    ") and not line.startswith("        ")]
    assert named == list(_signature(TASKS[family]))


def _bad_values(opt):
    """Values the option's checker must refuse, by the kind of value it takes."""
    for value in ("abc", float("nan"), "1,x", "no-such-value", "maybe"):  # numbers, lists, choices, switches
        try:
            opt.checked(value)
        except OptionValueError:
            yield value


def _checked_options():
    for family in sorted(registry.FAMILIES):
        for name, opt in registry.family_options(family, "inspect").items():
            bad = list(_bad_values(opt))
            if bad:
                yield pytest.param(family, name, bad[0], id=f"{family}-{name}")


@pytest.mark.parametrize("family, name, bad", list(_checked_options()))
def test_every_inspect_task_refuses_what_its_registry_checker_refuses(family, name, bad):
    """The hunter for the class: a value the registry refuses is refused by the task itself, as one line naming
    the option, before anything is loaded or generated."""
    with pytest.raises(OptionError) as err:
        TASKS[family](**{name: bad})
    message = str(err.value)
    assert "\n" not in message and name in message


def test_every_lmeval_option_of_a_family_is_one_the_registry_knows():
    for family, fam in registry.FAMILIES.items():
        assert set(fam.lmeval) <= set(registry.VOCABULARY), family
    for label, families in registry.LMEVAL_FAMILIES.items():
        assert all(f in registry.FAMILIES for f in families), label


@pytest.mark.parametrize("family", sorted(registry.FAMILIES))
def test_an_option_lmeval_cannot_take_is_refused_with_its_reason(family):
    label = registry.lmeval_family_of(registry.FAMILIES[family].lmeval_tasks[0])
    taken = set(registry.family_options(family, "lmeval"))
    for name, opt in registry.family_options(family, "inspect").items():
        if name in taken or name in registry.MODEL_ARG_NAMES:
            continue
        with pytest.raises(OptionValueError) as err:
            registry.check_metadata(label, {name: opt.default if opt.default is not None else 1})
        reason = registry.VOCABULARY[name].lmeval_reason
        assert f"option {name} is not an option of these lm-eval tasks" in str(err.value)
        if reason:
            assert reason in str(err.value)


@pytest.mark.parametrize("typo, meant", [("threshhold", "threshold"), ("treshold", "threshold"), ("methd", "method"),
                                         ("idss", "ids"), ("categroy", "category")])
def test_a_near_miss_of_an_option_is_refused_with_the_right_name(typo, meant):
    with pytest.raises(OptionValueError, match=f"did you mean {meant}"):
        registry.check_metadata("ub_ksn", {typo: 0.5})
    with pytest.raises(OptionValueError, match=f"did you mean {meant}"):
        registry.precheck_run(["ub_ksn_shuffling"], {typo: 0.5})


def test_model_args_and_other_tasks_keys_pass_the_hooks():
    assert registry.check_metadata("ub_ksn", {"pretrained": "gpt2", "model": "x", "version": 1, "bogus_key": 1}) == {}


def test_the_run_precheck():
    assert registry.precheck_run(["mmlu", "hellaswag"], {"threshhold": 1}) == []  # no ub task: not ours to judge
    assert registry.precheck_run(["ub_ksn_shuffling", "mmlu"], {"bogus_key": 1, "threshold": 0.01}) == ["bogus_key"]
    with pytest.raises(OptionValueError, match="option threshold: expected a number in"):
        registry.precheck_run(["ub_ksn"], {"threshold": "abc"})
    with pytest.raises(OptionValueError, match="ks_ns is not an option .*metric"):
        registry.precheck_run(["ub_ksn"], {"ks_ns": "1,10"})
    # a key one family of the run takes is checked by that family, not refused by the other
    assert registry.precheck_run(["ub_ksn", "ub_ksn_logprob"], {"end_of_answer": "eos"}) == []
    assert registry.precheck_run(["ub_logit", "ub_tar"], {"kl_floor": 1e-9, "subtask": "x"}) == []
    with pytest.raises(OptionValueError, match="kl_floor"):
        registry.precheck_run(["ub_logit"], {"kl_floor": -1})


@pytest.mark.parametrize("name, label", [("ub_ksn", "ub_ksn"), ("ub_ksn_text_explicit", "ub_ksn"),
                                         ("ub_ksn_logprob", "ub_ksn_logprob"),
                                         ("ub_ksn_logprob_shuffling", "ub_ksn_logprob"), ("ub_logit", "ub_logit"),
                                         ("ub_calibration_colors", "ub_logit"), ("ub_implicit_dice", "ub_logit"),
                                         ("ub_explicit", "ub_explicit"), ("ub_odds_percentile", "ub_odds"),
                                         ("ub_tar", "ub_tar"), ("mmlu", None), ("ub_ksnx", None)])
def test_lmeval_task_names_map_to_their_family(name, label):
    assert registry.lmeval_family_of(name) == label


def test_every_lmeval_task_of_ours_maps_to_a_family():
    from pathlib import Path

    from support.lmeval_tasks import load_task_yaml

    root = Path(__file__).resolve().parents[2] / "ub_lmeval" / "task_yamls"
    names = set()
    for path in root.rglob("*.yaml"):
        doc = load_task_yaml(path) or {}
        names |= {str(doc[key]) for key in ("task", "group") if isinstance(doc.get(key), str)}
    names = {n for n in names if n.startswith("ub_")}
    assert names and all(registry.lmeval_family_of(n) is not None for n in names), \
        sorted(n for n in names if registry.lmeval_family_of(n) is None)


def test_defaults_format_as_a_user_types_them():
    assert registry.format_default((1, 2, 5)) == "1,2,5"
    assert registry.format_default(None) == "none" and registry.format_default(1e-4) == "0.0001"


def test_a_ksn_score_records_the_threshold_and_ns_it_used(tmp_path):
    """The KS@N verdicts depend on the threshold; each score says which it used."""
    from inspect_ai import eval as inspect_eval

    import ub_inspect.providers  # noqa: F401

    log = inspect_eval(ksn(ids="te-bernoulli-spread", n_samples=20, threshold=0.01, ks_ns="5,20"), model="ub/oracle",
                       log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    (sample,) = log.samples
    meta = next(iter(sample.scores.values())).metadata
    assert meta["threshold"] == 0.01 and meta["ks_ns"] == [5, 20] and meta["method"] == "paper"


def _readme_options(family: str) -> set[str]:
    """The option names a task README's ``## Options`` section documents (table rows or list items)."""
    text = (ROOT / "ub_inspect" / family / "README.md").read_text(encoding="utf-8")
    section = text.split("## Options", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        head = (line.split("|")[1] if line.startswith("| `")
                else line[2:].split(":")[0] if line.startswith("- `") else "")
        names |= set(re.findall(r"`([a-z_]+)`", head))
    return names


@pytest.mark.parametrize("family", sorted(f for f in registry.FAMILIES
                                          if "## Options" in (ROOT / "ub_inspect" / f / "README.md").read_text()))
def test_a_task_readme_documents_exactly_the_registrys_options(family):
    """The README's option list is checked against the registry, so an option added, renamed or dropped there
    cannot leave the README behind."""
    assert _readme_options(family) == set(registry.FAMILIES[family].inspect)
