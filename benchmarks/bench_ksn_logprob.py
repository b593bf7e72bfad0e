"""Cost of sampling-free KS@N against sampling 100 answers, on the tiny trained model, printed (not a test).

For each problem (default: the four of ``tests/ksn_logprob/test_ksn_logprob_validation.py`` plus the largest enumerable
ones up to ``--max-candidates``), on CPU with transformers:

* **logprob route**: one request per candidate, ``prompt + " " + candidate``; tokens = the prompt's tokens once
  (a server with prefix caching, as vLLM, computes them once) plus each candidate's tokens; and without prefix
  caching, prompt x candidates. Wall: the prompt once, then all candidates as one batch over its key/value cache;
* **sampling route**: 100 replies at temperature 1 (one request with n = 100 on vLLM, 100 requests elsewhere);
  tokens = the prompt plus every generated token. Wall: the prompt once, then 100 replies decoded together.

Also the time of the scoring itself (``score_candidate_logprobs``: the exact or Monte-Carlo p_pass@N for 7 Ns).
Wall times are for this tiny model on this machine: what carries over is the request and token counts.

Usage: PYTHONPATH=.:tests python benchmarks/bench_ksn_logprob.py [--max-candidates 60]
"""

from __future__ import annotations

import argparse
import copy
import time


def main() -> int:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from support.tiny_trained import ensure_tiny_trained
    from ub_core.logprob.ksn_logprob import score_candidate_logprobs
    from ub_core.problems import get_problem, load_bank
    from ub_core.problems.candidates import candidate_set, enumerable_problems

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-candidates", type=int, default=60)
    args = ap.parse_args()
    path = ensure_tiny_trained()
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32).eval()
    torch.manual_seed(0)

    ids = ["te-bernoulli-conc", "rw-os_concurrency-02", "ti-hypergeometric-conc", "te-bernoulli-spread"]
    sized = sorted(((len(cs), p.id) for p, cs in enumerable_problems(load_bank("ksn"))
                    if len(cs) <= args.max_candidates),
                   reverse=True)
    ids += [pid for _, pid in sized[:2] if pid not in ids]
    print(f"{'problem':26} {'cand':>4} | {'logprob: req':>12} {'tokens (cached)':>15} {'(uncached)':>10} {'wall s':>7} "
          f"| {'sampling: req':>13} {'tokens':>7} {'wall s':>7} | {'score s':>7}")
    for pid in ids:
        problem = get_problem(pid)
        cs = candidate_set(problem)
        enc = tok(problem.full_prompt, return_tensors="pt")
        n_prompt = enc["input_ids"].shape[1]
        conts = [tok(problem.full_prompt + " " + t)["input_ids"][n_prompt:] for t in cs.texts]
        t0 = time.perf_counter()
        with torch.no_grad():
            first = model(**enc, use_cache=True)
            width = max(len(c) for c in conts)
            batch = torch.tensor([c + [tok.eos_token_id] * (width - len(c)) for c in conts])
            cache = copy.deepcopy(first.past_key_values)
            cache.batch_repeat_interleave(len(conts))
            out = model(input_ids=batch, past_key_values=cache, use_cache=True).logits.float().log_softmax(-1)
            first_lp = first.logits[0, -1].float().log_softmax(-1)
            lps = []
            for i, c in enumerate(conts):
                lp = first_lp[c[0]].item() + sum(out[i, j - 1, c[j]].item() for j in range(1, len(c)))
                lps.append(lp)
        logprob_wall = time.perf_counter() - t0
        cand_tokens = sum(len(c) for c in conts)
        t0 = time.perf_counter()
        scores, _ = score_candidate_logprobs(problem, lps)
        score_wall = time.perf_counter() - t0
        # sampling: 100 replies over the prompt's cache, 8 tokens at most
        t0 = time.perf_counter()
        with torch.no_grad():
            cache = copy.deepcopy(first.past_key_values)
            cache.batch_repeat_interleave(100)
            logits = first.logits[:, -1, :].expand(100, -1)
            done = torch.zeros(100, dtype=torch.bool)
            generated = 0
            for _ in range(8):
                nxt = torch.multinomial(torch.softmax(logits.float(), -1), 1).squeeze(1)
                generated += int((~done).sum())
                done |= nxt == tok.eos_token_id
                if bool(done.all()):
                    break
                logits = model(input_ids=nxt[:, None], past_key_values=cache, use_cache=True).logits[:, -1, :]
        sample_wall = time.perf_counter() - t0 + 0.0
        print(f"{pid:26} {len(cs):>4} | {len(cs):>12} {n_prompt + cand_tokens:>15} "
              f"{len(cs) * n_prompt + cand_tokens:>10} "
              f"{logprob_wall:>7.3f} | {'1 (n=100)':>13} {n_prompt + generated:>7} {sample_wall:>7.3f} | "
              f"{score_wall:>7.3f}"
              f"   p_pass@100 {scores['p_pass@100']:.3f}")
    print("\nThe logprob route sends one request per candidate; with prefix caching its token cost is one prompt plus "
          "the candidates' tokens, against one prompt plus ~100 x reply tokens for sampling.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
