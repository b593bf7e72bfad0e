"""Dice batch replies read as a person reads them (:func:`ub_core.parsing.parse_batch_reply`).

Findings: a reply giving its draws in several headed blocks kept only the last block (100 of 1,000 values,
count_error 0.9); two code fences, two JSON lists or two brace groups separated by text kept half; a closing line of
prose with numbers (a total, a summary) was read as draws. The property suite draws reply layouts from a grammar
around a known list of values (blocks, headings, numbering, bullets, fences, JSON, brace groups, think blocks,
opening and closing prose full of numbers); the reader must return exactly that list."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ub_core.parsing import parse_batch_reply

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _read(reply: str) -> list[float]:
    res = parse_batch_reply(reply)
    assert res.ok, res.error
    return res.value


# ----------------------------------------------------------------------------------------------- the findings

def test_finding_headed_blocks_are_all_read():
    values = [round(0.001 * i, 3) for i in range(1000)]
    blocks = [f"Values {k * 100 + 1}-{k * 100 + 100}:\n" + ", ".join(f"{v:.3f}" for v in values[k * 100:(k + 1) * 100])
              for k in range(10)]
    assert _read("Here are 1000 draws.\n\n" + "\n\n".join(blocks)) == values


@pytest.mark.parametrize("reply", [
    "```\n0.1, 0.2\n```\nMore:\n```\n0.3, 0.4\n```",
    "First [0.1, 0.2] and then [0.3, 0.4].",
    "{0.1} {0.2}\nthe rest:\n{0.3} {0.4}",
    "```json\n[0.1, 0.2]\n```\n\n```json\n[0.3, 0.4]\n```",
], ids=["two fences", "two json lists", "two brace runs", "two json fences"])
def test_finding_several_fences_lists_or_groups_are_all_read(reply):
    assert _read(reply) == [0.1, 0.2, 0.3, 0.4]


def test_finding_a_closing_line_of_prose_is_not_draws():
    reply = "- 0.1\n- 0.2\n- 0.3\n\nTotal: 3 values, sum 0.6, mean 0.2 (1000 requested)."
    assert _read(reply) == [0.1, 0.2, 0.3]


# ----------------------------------------------------------------------------------------------- the grammar

@st.composite
def value_texts(draw):
    """One value as a model might write it; its float is what a person reads."""
    digits = draw(st.integers(0, 4))
    k = draw(st.integers(-10**6, 10**6))
    text = f"{k / 10 ** digits:.{digits}f}"
    if draw(st.integers(0, 9)) == 0:
        text = f"{k / 10 ** digits:.3e}"
    return text


OPENINGS = ["Sure! Here are {n} draws from the distribution:", "I'll generate {n} samples (seed 42).",
            "Below are the {n} values, rounded to 4 decimals.", "Here you go ({n} numbers, mean ~0.5):"]
HEADINGS = ["Values {a}-{b}:", "### Batch {k} of {m}", "**Block {k}** ({c} values)", "Next {c} draws:",
            "Part {k}/{m}", "Samples {a} to {b}"]
CLOSINGS = ["Total: {n} values.", "Summary: mean 0.49, SD 0.29 over {n} draws.",
            "That makes {n} numbers; the largest is 3.2 and the smallest -2.9.",
            "Count = {n}, as requested (1000 asked).", "Let me know if you need {n} more!"]
THINKS = ["<think>I need {n} numbers; maybe 0.5, 0.7 and 12 to start.</think>",
          "<think>\nPlan: 10 blocks of 100. Mean should be 0, sd 1.\n</think>"]
STYLES = ["comma", "bare_comma", "semicolon", "space", "lines", "bullets", "numbered", "paren_numbered",
          "sample_numbered", "json", "json_multiline", "json_object", "braces", "fenced_comma", "fenced_json",
          "inline_prose"]


def _render(style: str, vals: list[str], start: int) -> str:
    if style == "comma":
        return ", ".join(vals)
    if style == "bare_comma":
        return ",".join(vals)
    if style == "semicolon":
        return "; ".join(vals)
    if style == "space":
        return " ".join(vals)
    if style == "lines":
        return "\n".join(vals)
    if style == "bullets":
        return "\n".join(f"- {v}" for v in vals)
    if style == "numbered":
        return "\n".join(f"{start + i}. {v}" for i, v in enumerate(vals))
    if style == "paren_numbered":
        return "\n".join(f"{start + i}) {v}" for i, v in enumerate(vals))
    if style == "sample_numbered":
        return "\n".join(f"Sample {start + i}: {v}" for i, v in enumerate(vals))
    if style == "json":
        return "[" + ", ".join(vals) + "]"
    if style == "json_multiline":
        return "[\n" + ",\n".join(f"  {v}" for v in vals) + "\n]"
    if style == "json_object":
        return json.dumps({"block": start, "count": len(vals)})[:-1] + ', "values": [' + ", ".join(vals) + "]}"
    if style == "braces":
        return " ".join(f"{{{v}}}" for v in vals)
    if style == "fenced_comma":
        return "```\n" + ", ".join(vals) + "\n```"
    if style == "fenced_json":
        return "```json\n[" + ", ".join(vals) + "]\n```"
    if style == "inline_prose":
        return f"The draws {start} onwards are [" + ", ".join(vals) + "], as requested."
    raise AssertionError(style)


@st.composite
def replies(draw):
    vals = draw(st.lists(value_texts(), min_size=1, max_size=60))
    n = len(vals)
    cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=min(5, n - 1)))) if n > 1 else []
    blocks = [vals[a:b] for a, b in zip([0, *cuts], [*cuts, n])]
    one_style = draw(st.booleans())
    style0 = draw(st.sampled_from(STYLES))
    parts = []
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(THINKS)).format(n=n))
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(OPENINGS)).format(n=n))
    start = 1
    for k, block in enumerate(blocks, 1):
        if len(blocks) > 1 or draw(st.booleans()):
            parts.append(draw(st.sampled_from(HEADINGS)).format(a=start, b=start + len(block) - 1, k=k,
                                                              m=len(blocks), c=len(block)))
        style = style0 if one_style else draw(st.sampled_from(STYLES))
        parts.append(_render(style, block, start))
        start += len(block)
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(CLOSINGS)).format(n=n))
    sep = draw(st.sampled_from(["\n", "\n\n"]))
    return sep.join(parts), [float(v) for v in vals]


@SETTINGS
@given(replies())
def test_every_layout_returns_exactly_the_values(case):
    reply, expected = case
    assert _read(reply) == expected, reply


#: the layouts of the report, each around the same 12 values
LAYOUTS = {
    "one comma line": "{c}",
    "headed blocks": "Values 1-4:\n{b1}\n\nValues 5-8:\n{b2}\n\nValues 9-12:\n{b3}",
    "markdown headings": "### Batch 1 of 3\n{b1}\n### Batch 2 of 3\n{b2}\n### Batch 3 of 3\n{b3}",
    "numbered": "{numbered}",
    "bullets + closing total": "{bullets}\n\nTotal: 12 values, mean 0.52.",
    "three fences": "```\n{b1}\n```\ntext 2\n```\n{b2}\n```\nand 3:\n```\n{b3}\n```",
    "three JSON lists": "[{b1}]\nthen [{b2}]\nlast [{b3}]",
    "JSON object": '{{"n": 12, "values": [{c}]}}',
    "think block + answer": "<think>12 values, maybe 0.5 and 0.9 first</think>\n{c}",
    "answer tag": "I drew 12 values (seed 7).\n<answer>{c}</answer>\nDone: 12 of 12.",
    "brace groups in runs": "{braces1}\nnow the rest\n{braces2}",
}


def _layout_values():
    vals = [f"{0.05 + 0.08 * i:.2f}" for i in range(12)]
    return vals, {
        "c": ", ".join(vals), "b1": ", ".join(vals[:4]), "b2": ", ".join(vals[4:8]), "b3": ", ".join(vals[8:]),
        "numbered": "\n".join(f"{i + 1}. {v}" for i, v in enumerate(vals)),
        "bullets": "\n".join(f"* {v}" for v in vals),
        "braces1": " ".join(f"{{{v}}}" for v in vals[:6]), "braces2": " ".join(f"{{{v}}}" for v in vals[6:]),
    }


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_named_layouts(layout):
    vals, fill = _layout_values()
    assert _read(LAYOUTS[layout].format(**fill)) == [float(v) for v in vals]


@pytest.mark.parametrize("reply, reason", [
    ("", "empty"), ("No numbers here.", "no numbers"), ("<think>0.1, 0.2, 0.3", "cut off inside <think>"),
    ("Total: 1000 values.", "no numbers"), ("1,5, 2,5", "element"), (None, "expected a string"),
])
def test_failures_say_why(reply, reason):
    res = parse_batch_reply(reply)
    assert not res.ok and reason in res.error
