"""What each task says of its options: the summary of its Inspect task, and the help of an option where the task
words it more precisely than the generic help of :data:`ub_core.option_registry.VOCABULARY`. The Inspect task's
docstring is built from these (:func:`ub_core.option_registry.task_docstring`); nothing else states them."""

from __future__ import annotations

__all__ = ["TASK_SUMMARY", "TASK_HELP"]

#: family -> the first lines of its Inspect task's docstring
TASK_SUMMARY: dict[str, str] = {
    "ksn": 'UnpredictaBench KS@N.',
    "ksn_logprob": "Sampling-free KS@N: the model's whole answer distribution from candidate log-probabilities.",
    "calibration": 'Numeric calibration of next-token probabilities.',
    "implicit": 'Implicit probabilistic reasoning from next-token probabilities.',
    "explicit": 'Explicit probabilistic reasoning: MCQ answered by the next-token probability of each letter.',
    "odds": 'What are the odds (the odds paper).',
    "dice": 'Bad Dice Players: can the model sample from 15 stated laws?',
    "dice_mcq": 'Bad Dice Players, downstream MCQ: are the answer keys of generated questions uniform over A-D?',
    "stability": 'The non-determinism paper\'s TARr@N / TARa@N and accuracy extremes over N "deterministic" runs.',
}

#: family -> option -> its help in that task
TASK_HELP: dict[str, dict[str, str]] = {
    "ksn": {
        "categories": ('subset of categories (text_explicit, text_implicit, code_explicit, code_implicit, multimodal, '
                       'real_world, shuffling), a list or a comma-separated string.'),
        "n_samples": 'answers collected per problem (paper: 100).',
        "ks_ns": 'the N of KS@N, each at most ``n_samples`` (default: those of 1,2,5,10,20,50,100 that are).',
        "threshold": 'KS p-value threshold, in (0, 1) (paper: 1e-4).',
        "method": '``paper`` (scipy exact for continuous targets, exact permutation otherwise) or ``exact``.',
        "list_size": 'values asked per reply: 1, or list prompting with 10 or 35 (UnpredictaBench, sec. 5.3).',
        "value_source": '``final`` answer or ``reasoning`` tokens (reasoning models, sec. 4.4).',
        "dataset": '``builtin``, or a path / HF id of the official release (with ``ground_truth``).',
        "ground_truth": "the release's ground_truth_values.json.",
        "split": 'dataset split of the official release.',
        "gt_size": 'ground-truth draws per problem (paper: 10,000).',
        "seed": 'ground-truth seed (an integer >= 0).',
        "max_attempts": 'attempts per answer slot before it is skipped (paper: 5).',
        "temperature": 'sampling temperature, >= 0 (paper: 1.0).',
        "max_tokens": 'per reply (>= 1); default 64, 640 for lists of 10, 2512 for lists of 35.',
        "limit_per_category": 'keep only the first N problems of each category (quick checks).',
        "ids": 'keep only these problem ids (a list or a comma-separated string), in bank order.',
        "bank": ("the registered bank of sampled problems to run: ``ksn`` (UnpredictaBench), or a lab's own, "
                 'registered by its package under the entry-point group ``unpredictabench.banks`` '
                 '(``examples/custom_bank``).'),
        "bank_options": ("a plug-in bank's own options, a mapping (``-T 'bank_options={answer_instruction: false}'``; "
                         "``examples/failure_to_mix``)."),
    },
    "ksn_logprob": {
        "categories": 'subset of the KS@N categories (a list or a comma-separated string; default all).',
        "ks_ns": 'the N of ``p_pass@N`` (default 1, 2, 5, 10, 20, 50, 100).',
        "threshold": 'KS p-value threshold, in (0, 1) (UnpredictaBench: 1e-4).',
        "method": '``paper`` or ``exact``, as in ``ub_inspect/ksn``.',
        "chat_template": ('render the prompt as a user message through a chat template before the candidates: '
                          "``model`` (the evaluated model's tokenizer) or a tokenizer folder / cached hub id. Default:"
                          ' raw text.'),
        "delimiter": ('text between the context and each candidate; default ``" "`` after raw text, ``""`` after a '
                      "chat template (lm-eval's rule)."),
        "gt_size": 'ground-truth draws per problem (paper: 10,000).',
        "seed": 'ground-truth seed (an integer >= 0); the Monte-Carlo draws of ``p_pass@N`` use it too.',
        "draws": 'Monte-Carlo draws of ``p_pass@N`` where the exact sum is larger (at least 2,000).',
        "limit_per_category": 'keep only the first N problems of each category (quick checks).',
        "ids": 'keep only these problem ids (a list or a comma-separated string), in bank order.',
        "end_of_answer": ('what follows each candidate, so that q(c) is the probability that the reply is exactly c: '
                          "``eos`` (the model's end-of-sequence token, read from its tokenizer; the default), ``none``"
                          ' (nothing: the probability that the reply starts with c, an upper bound) or the text that '
                          'ends a reply.'),
        "n_samples": 'the answer slots of the sampled run that ``p_pass@N`` predicts (``ub_inspect/ksn``: 100).',
        "max_attempts": 'attempts per slot in that run; invalid replies are retried (``ub_inspect/ksn``: 5).',
        "enumeration": ('``auto`` (every problem: listed where the answers can be listed, the reply tree elsewhere; '
                        'the default), ``listed`` (only the problems whose answers can be listed in advance; the '
                        "others are named and left out) or ``tree`` (every problem through its reply tree: the model's"
                        ' top-k next tokens, expanded best first). The tree route needs a provider that returns '
                        '``top_logprobs`` after a raw text (completions providers).'),
        "max_missing": ('also stop the tree route once the finished replies hold ``1 - max_missing`` of the '
                        "probability (default: no such stop; the bounds' targets decide). What is left unexpanded is "
                        'reported (``missing_mass``, ``cell_mass``) and bounds KS distance and p_pass@N.'),
        "max_requests": 'the most next-token requests per problem in the tree route (default 4,000).',
        "top_k": ("next tokens per request in the tree route (default 20, OpenAI's limit; vLLM returns up to its "
                  '``--max-logprobs``, so serve with ``--max-logprobs 1000`` for tokenizers with three-digit tokens).'),
        "bank": "the registered bank of sampled problems (``ksn``, or a plug-in's, as in ``ub_inspect/ksn``).",
        "cells": ('numbers as intervals in the tree route (default true): an unexpanded numeric prefix such as '
                  '``{4.9`` bounds its mass to [4.9, 5.0] instead of leaving it missing '
                  '(``ub_core.logprob.number_cells``; it assumes a reply that has begun a number finishes it). '
                  '``false``: leaves only.'),
        "target_ks_width": 'the tree route stops when the KS-distance bounds are at most this wide (default 0.02)...',
        "target_p_pass_width": ('... and the p_pass bounds at the largest N at most this wide (default 0.1), or at '
                                '``max_requests``.'),
    },
    "calibration": {
        "categories": 'colors, wordproblems, distributions (a list or a comma-separated string; default all).',
        "size": '``subset`` (stratified default) or ``full``.',
        "limit_per_category": 'keep only the first N items of each category (quick checks).',
        "mode": ('``prompt_logprobs`` (completions providers; exact for multi-token options) or ``top_logprobs`` '
                 '(top-20 lists, read token by token).'),
        "ids": 'keep only these item ids (a list or a comma-separated string), in bank order.',
        "convention": ('``exclusive`` (default: the probability that the reply is the option; a variant whose tokens '
                       "begin another's loses that one's mass) or ``paper`` (the literal joint probability of the "
                       'tokens); ``ub_core.logprob.option_logprob``.'),
        "equal_counts": ('``drop`` (default) leaves the colors and wordproblems items with equal counts out, as the '
                         'baselines of ``ub reproduce calibration`` do, or ``keep`` '
                         '(``ub_core.metrics.calibration_item_set``); the task metadata state the rule and the count '
                         'left out.'),
    },
    "implicit": {
        "categories": ('dice, coins, preference, choice, statistics, dice_shown (ours) (a list or a comma-separated '
                       'string).'),
        "size": '``subset`` (stratified default) or ``full``.',
        "limit_per_category": 'keep only the first N items of each category (quick checks).',
        "mode": ('``prompt_logprobs`` (completions providers; exact for multi-token outcomes) or ``top_logprobs`` '
                 '(top-20 lists, read token by token).'),
        "ids": 'keep only these item ids (a list or a comma-separated string), in bank order.',
        "convention": ('``exclusive`` (default: the probability that the reply is the option; a variant whose tokens '
                       "begin another's loses that one's mass) or ``paper`` (the literal joint probability of the "
                       'tokens); ``ub_core.logprob.option_logprob``.'),
        "kl_floor": ("the floor the model's probabilities are raised to inside KL(ideal || model) (default 1e-12, "
                     '``ub_core.metrics.KL_FLOOR``); ``kl_floored`` counts the items where it sets the value.'),
    },
    "explicit": {
        "categories": 'dice, coins, preference, choice, statistics (a list or a comma-separated string).',
        "size": '``subset`` (stratified default) or ``full``.',
        "limit_per_category": 'keep only the first N items of each category (quick checks).',
        "mode": '``prompt_logprobs`` (completions providers) or ``top_logprobs`` (top-20 lists, read token by token).',
        "ids": 'keep only these item ids (a list or a comma-separated string), in bank order.',
        "convention": ('``exclusive`` (default: the probability that the reply is the option; a variant whose tokens '
                       "begin another's loses that one's mass) or ``paper`` (the literal joint probability of the "
                       'tokens); ``ub_core.logprob.option_logprob``.'),
    },
    "odds": {
        "task": '``percentile``, ``probability`` or ``sampling``.',
        "shots": 'shot counts to keep, e.g. ``3`` or ``0,3,9`` (default: all of 0, 1, 3, 5, 7, 9).',
        "shot_type": '``distribution`` or ``family`` (default both; 0-shot items are always kept).',
        "context": ('``none`` (idealised), ``health``, ``finance``, ``climate``, their ``_normal`` and ``_idealized`` '
                    'framings, a comma list, or ``all`` (real-world framings are percentile items).'),
        "families": 'comma list of families (default all 12).',
        "limit": 'keep the first N matching items.',
        "edition": '``subset`` (default; every family x task x shots setting) or ``full``.',
        "n_samples": 'values collected per sampling item (paper: 1,000).',
        "list_size": 'sampling only: values asked per reply (list prompting), 1 = one draw per reply as in the paper.',
        "ks_ns": 'the N of KS@N for sampling (default 10, 100, 1000).',
        "max_attempts": 'sampling: attempts per answer slot before it is skipped.',
        "temperature": "the paper's 0.7.",
        "max_tokens": 'per reply (default 64; sampling lists 24 per value).',
        "convention": ('``paper`` (default: what the odds paper states) or ``release`` (what its public code computes;'
                       " see the README's conventions table)."),
        "gt_size": 'ground-truth draws per sampling item.',
        "seed": 'the seed of the ground-truth draws.',
    },
    "dice": {
        "protocol": ('``batch`` (one request for ``n`` values, the default) or ``independent`` (``n`` one-value '
                     'requests).'),
        "n": 'values asked per law (the paper: 1,000).',
        "convention": ("``default`` (exact one-sample tests against the law) or ``release`` (the release's tests: "
                       'two-sample KS against 1,000 seeded draws, pooled chi-square); see the README.'),
        "laws": 'comma list of laws by their release names (default all 15).',
        "limit": 'keep the first N laws.',
        "alpha": "significance level (the paper's 0.01; a law passes when p > alpha).",
        "seed": "seed of the default convention's Monte-Carlo test and reference draws.",
        "temperature": "the paper's 1.0.",
        "max_tokens": 'per reply (default 24 per value asked in batch, 64 in independent).',
        "max_attempts": 'independent: attempts per value before its slot is skipped.',
    },
    "dice_mcq": {
        "n": 'questions asked, one request each (the paper: 1,000).',
        "alpha": 'significance level of the uniformity test (uniform: p > alpha).',
        "temperature": "the paper's 1.0.",
        "max_tokens": 'per reply (default 400).',
    },
    "stability": {
        "epochs": ("N, the number of identical runs (default 5; paper: 10). Inspect's ``--epochs`` overrides it; the "
                   "log's ``tar_a_summary`` reports the N that ran (``epochs``)."),
        "subtasks": ('some of navigate, logical_deduction_three_objects, geometric_shapes, ruin_names, '
                     'college_mathematics, high_school_european_history, professional_accounting, public_relations (a '
                     'list or a comma-separated string; default all eight).'),
        "source": ('``builtin`` (generated items and small labelled stand-ins, offline), ``hf`` (BBH and MMLU from the'
                   ' hub or local exports given by ``bbh`` / ``mmlu``), or a path / HF id used for every chosen '
                   'subtask.'),
        "limit": 'at most this many questions per subtask.',
        "bbh": 'with ``source=hf``, the BBH dataset id or local export (default lukaemon/bbh).',
        "mmlu": 'with ``source=hf``, the MMLU dataset id or local export (default cais/mmlu).',
        "split": 'dataset split for hub and local sources.',
        "size": 'built-in edition: ``subset`` (default, 328 items) or ``full`` (1,210 items; BBH-sized).',
        "seed": 'the fixed generation seed, the same in every epoch.',
        "max_tokens": "per reply (default: the provider's).",
        "convention": ("``paper`` (default: the paper's definitions, our reader) or ``release`` (the rules of the "
                       "paper's public release ``llm-stability``: its reader, its TARa, spread = best - worst; see "
                       'README).'),
    },
}
