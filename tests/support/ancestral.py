"""Ancestral sampling, exact reply log-probabilities and top-k next tokens from a local transformers model, for the
validations of sampling-free KS@N (tests/ksn_logprob/test_ksn_logprob_validation.py: the listed route;
tests/ksn_logprob/test_reply_tree_validation.py: the reply-tree route). Test support; never part of the shipped package.

:class:`TinyLM` wraps one tokenizer and model (the tiny trained Llama, tests/support/tiny_trained.py):

* :meth:`TinyLM.replies` samples replies at temperature 1 from the model's full next-token distribution (as
  ``generate`` with ``do_sample=True, top_k=0, top_p=1``), decoded as a sampler returns them (special tokens
  skipped). The stream of one ``(prompt, seed)`` is kept and extended on demand, so two tests that ask for the
  same problem and seed share one set of draws, and the first ``count`` replies never depend on who asked first;
* :meth:`TinyLM.exact_reply_logprob` is log P(the reply is exactly ``reply``): its tokens, then EOS;
* :meth:`TinyLM.next_tokens` is the top-k next tokens after ``prompt + prefix`` as ``(text, log-probability)``
  pairs, the EOS token written as its text: what an OpenAI-compatible server's ``top_logprobs`` gives the tree.

:func:`protocol_runs` cuts a reply stream into the runs of a sampled protocol; :func:`within_binomial` is the
binomial acceptance check both validations use.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["VALIDATION_SEED", "assert_teeth", "binomial_acceptance", "TinyLM", "read_replies", "protocol_runs",
           "sampled_pass_counts", "replies_needed",
           "within_binomial"]

#: the seed of the validations' reply streams (tests/ksn_logprob/test_ksn_logprob_validation.py adds each problem's
#: index)
VALIDATION_SEED = 20261126
#: rows decoded together; per-row cost grows with the batch beyond ~1,000 (the cache concatenations)
BATCH = 1000


class TinyLM:
    def __init__(self, tok: Any, model: Any, max_new_tokens: int = 16) -> None:
        self.tok, self.model, self.max_new_tokens = tok, model, max_new_tokens
        self._streams: dict[tuple[str, int], tuple[Any, list[str]]] = {}
        self._texts: list[str] | None = None

    @classmethod
    def load(cls, path: Any, max_new_tokens: int = 16) -> "TinyLM":
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32,
                                                     attn_implementation="sdpa").eval()  # eager is 4x slower here
        return cls(tok, model, max_new_tokens)

    # ------------------------------------------------------------------------------------------- sampling
    def replies(self, prompt: str, count: int, seed: int) -> list[str]:
        """The first ``count`` replies of the seeded stream after ``prompt``, decoded (special tokens skipped)."""
        import torch

        key = (prompt, seed)
        if key not in self._streams:
            self._streams[key] = (torch.Generator().manual_seed(seed), [])
        gen, texts = self._streams[key]
        while len(texts) < count:
            texts.extend(self.sample(prompt, BATCH, gen)[0])
        return texts[:count]

    def sample(self, prompt: str, n: int, gen: Any = None) -> tuple[list[str], int]:
        """``n`` replies decoded together over the prompt's key/value cache (computed once, repeated over the
        batch), and the tokens generated (EOS included); a reply that ended (EOS) leaves the batch, so the long
        replies do not make every row run to the end."""
        import torch

        tok, model = self.tok, self.model
        enc = tok(prompt, return_tensors="pt")
        with torch.no_grad():
            first = model(**enc, use_cache=True)
        cache = copy.deepcopy(first.past_key_values)
        cache.batch_repeat_interleave(n)
        logits = first.logits[:, -1, :].expand(n, -1)
        tokens = torch.full((n, self.max_new_tokens), tok.eos_token_id, dtype=torch.long)
        active = torch.arange(n)  # rows still generating; finished rows leave the batch and its cache
        generated = 0
        with torch.no_grad():
            for step in range(self.max_new_tokens):
                nxt = torch.multinomial(torch.softmax(logits.float(), -1), 1, generator=gen).squeeze(1)
                tokens[active, step] = nxt
                generated += int(nxt.numel())
                going = nxt != tok.eos_token_id
                if not bool(going.any()) or step == self.max_new_tokens - 1:
                    break
                if not bool(going.all()):
                    keep = torch.nonzero(going).squeeze(1)
                    cache.reorder_cache(keep)
                    active, nxt = active[keep], nxt[keep]
                logits = model(input_ids=nxt[:, None], past_key_values=cache, use_cache=True).logits[:, -1, :]
        return tok.batch_decode(tokens, skip_special_tokens=True), generated

    # ----------------------------------------------------------------------------------- log-probabilities
    def exact_reply_logprob(self, context: str, reply: str) -> float:
        """log P(the reply after ``context`` is exactly ``reply``): its tokens, then EOS."""
        import torch

        tok, model = self.tok, self.model
        ctx = tok(context)["input_ids"]
        whole = tok(context + reply)["input_ids"] + [tok.eos_token_id]
        if whole[:len(ctx)] != ctx:
            raise ValueError(f"the reply {reply!r} merges with the end of the prompt")
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([whole])).logits[0].float(), -1)
        return float(sum(logp[i - 1, whole[i]].item() for i in range(len(ctx), len(whole))))

    def next_tokens(self, prompt: str, prefix: str, top_k: int = 20) -> list[tuple[str, float]]:
        """The top-``top_k`` next tokens after ``prompt + prefix`` (tokenised afresh, as a server does), from the
        full softmax at temperature 1, each token id decoded alone; the EOS token is its text (``</s>``)."""
        import torch

        if self._texts is None:
            tok = self.tok
            self._texts = [tok.decode([i], clean_up_tokenization_spaces=False) for i in range(len(tok))]
            self._texts[tok.eos_token_id] = tok.eos_token
        ids = self.tok(prompt + prefix, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(self.model(ids).logits[0, -1].float(), -1)
        values, index = torch.topk(logp, top_k)
        return [(self._texts[i], float(v)) for i, v in zip(index.tolist(), values.tolist())]


# ------------------------------------------------------------------------------------------- protocols

def read_replies(problem: Any, texts: list[str]) -> list[float | None]:
    """Each sampled reply read by the problem's parser (as the sampled KS@N scorer reads it): its value, or None
    (invalid)."""
    out = []
    for text in texts:
        parsed = problem.parse(text)
        out.append(float(parsed.value) if parsed.ok else None)
    return out


def protocol_runs(replies: list[Any], slots: int, attempts: int, runs: int) -> list[list[Any]]:
    """The valid values of ``runs`` consecutive sampled runs of a protocol (``replies`` in order, None = invalid):
    ``slots`` slots, each taking replies until one is valid or ``attempts`` were invalid (then it is skipped)."""
    it = iter(replies)
    out = []
    for _ in range(runs):
        values = []
        for _ in range(slots):
            for _ in range(attempts):
                v = next(it)
                if v is not None:
                    values.append(v)
                    break
        out.append(values)
    return out


def sampled_pass_counts(replies: list[Any], truth: Any, support: str, protocols: Any, ns: Any,
                        runs: int) -> dict[str, dict[int, int]]:
    """Per protocol ``(name, slots, attempts)``, per N: how many of ``runs`` sampled runs pass KS@N (the KS@N
    scorer's test on each run's valid values against ``truth``)."""
    from ub_core.metrics import ks_at_n

    passes = {}
    for name, slots, attempts in protocols:
        counts = {n: 0 for n in ns}
        for values in protocol_runs(replies, slots, attempts, runs):
            ks = ks_at_n(values, truth, ns=ns, support=support)
            for n in ns:
                counts[n] += int(ks[n]["pass"])
        passes[name] = counts
    return passes


def replies_needed(valid: float, slots: int, attempts: int, runs: int) -> int:
    """Replies that ``runs`` runs of a protocol use, with a 20% margin: a slot takes (1 - (1 - V)^A) / V replies
    on average (the mean of a geometric number of attempts truncated at A)."""
    per_slot = attempts if valid <= 0 else (1 - (1 - valid) ** attempts) / valid
    return int(1.2 * runs * slots * per_slot) + BATCH


def binomial_acceptance(trials: int, p_lo: float, p_hi: float, level: float) -> tuple[int, int]:
    """The counts a check at ``level`` accepts: from the lower ``level / 2`` quantile of Binomial(trials, p_lo) to
    the upper one of Binomial(trials, p_hi)."""
    from scipy import stats

    return int(stats.binom.ppf(level / 2, trials, p_lo)), int(stats.binom.isf(level / 2, trials, p_hi))


def assert_teeth(cells: dict, runs: int, level: float) -> None:
    """A pass-rate check has teeth when it can fail. ``cells``: (problem, protocol, N) -> (bounds low, bounds high,
    point prediction). Asserted: some cell's acceptance region (:func:`binomial_acceptance` at its bounds) excludes
    both 0 and ``runs`` passes, so neither a route that always passes nor one that never does is accepted there; and
    for some (problem, N) one protocol's expected pass count (its point prediction) lies outside the other's region,
    so a route that scored one protocol as the other would be expected to fail. Stated on the check's own regions
    and the model's measured predictions, not on what the model was hoped to learn."""
    regions = {key: binomial_acceptance(runs, lo, hi, level) for key, (lo, hi, _) in cells.items()}
    assert any(0 < a and b < runs for a, b in regions.values()), regions
    protocols = sorted({key[1] for key in cells})
    assert any(not regions[pid, p, n][0] <= round(cells[pid, q, n][2] * runs) <= regions[pid, p, n][1]
               for pid, _, n in cells for p in protocols for q in protocols if p != q), (regions, cells)


def within_binomial(label: str, k: int, trials: int, p_lo: float, p_hi: float, level: float, lines: list,
                    bad: list) -> None:
    """Record whether the count ``k`` of ``trials`` lies in :func:`binomial_acceptance`."""
    lo, hi = binomial_acceptance(trials, p_lo, p_hi, level)
    lines.append(f"{label}, sampled {k}/{trials}, accept [{lo}, {hi}]")
    if not lo <= k <= hi:
        bad.append(lines[-1])
