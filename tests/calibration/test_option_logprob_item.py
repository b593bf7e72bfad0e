"""The OptionItem record: validation, the record round trip, and truth draws that follow the ideal distribution."""

import numpy as np
import pytest

from ub_core.problems import OptionItem


def _item(**kw):
    base = dict(id="t-1", bank="implicit", category="coins", family="binomial", params={"n": 2, "p": 0.5},
                prompt="Two fair coins are tossed. The number of heads is", options=("0", "1", "2"),
                probabilities=(0.25, 0.5, 0.25), cluster="coins-2", metadata={"focus": "heads"})
    base.update(kw)
    return OptionItem(**base)


def test_record_round_trip_is_exact():
    item = _item(answer_index=1)
    back = OptionItem.from_record(item.to_record())
    assert back.to_record() == item.to_record()


@pytest.mark.parametrize("kw, msg", [
    (dict(options=("a",), probabilities=(1.0,)), "at least two"),
    (dict(options=("a", "a"), probabilities=(0.5, 0.5)), "distinct"),
    (dict(probabilities=(0.5, 0.5)), "2 probabilities for 3"),
    (dict(probabilities=(0.5, 0.6, -0.1)), ">= 0"),
    (dict(probabilities=(0.3, 0.3, 0.3)), "sum to 1"),
    (dict(answer_index=3), "out of range"),
])
def test_invalid_items_get_one_line_errors(kw, msg):
    with pytest.raises(ValueError, match=msg) as exc:
        _item(**kw)
    assert "\n" not in str(exc.value)


def test_from_record_names_the_missing_field():
    rec = _item().to_record()
    del rec["options"]
    with pytest.raises(ValueError, match="missing field 'options'"):
        OptionItem.from_record(rec)


def test_truth_is_pure_and_follows_the_ideal_distribution():
    item = _item()
    a, b = item.truth(10_000, seed=0), item.truth(10_000, seed=0)
    assert np.array_equal(a, b) and not np.array_equal(a, item.truth(10_000, seed=1))
    freq = np.bincount(a, minlength=3) / a.size
    # each frequency has sd sqrt(p(1-p)/n) <= 0.005; 5 sd = 0.025
    assert np.allclose(freq, [0.25, 0.5, 0.25], atol=0.025)
