"""A tiny TRAINED Llama for statistical end-to-end tests (test support; never part of the shipped package).

Built from scratch with no download, then trained on CPU so that its answers follow KNOWN distributions:

- two ``ksn`` bank problems (:data:`TRAINED_KSN`), each prompted with its exact ``full_prompt`` (what
  ``ub_inspect/ksn`` and ``ub_ksn`` send), answered ``{k}`` with the problem's true probabilities;
- three more ``ksn`` problems (:data:`TAUGHT_KSN`) answered with a known law that is NOT the truth, invalid
  replies included, so that the tests that need a failing problem or invalid replies depend on training, never
  on what an untrained prompt happens to get on one machine;
- the next-token prompts of :data:`NEXT_TOKEN_PROMPTS`: a real implicit-reasoning item (two biased coins) and a
  real numeric-calibration colour item (22 red, 52 blue), each ending right before the outcome.

Every prompt is trained in the four forms our routes send: raw text (lm-eval ``--model hf`` / ``vllm``) and the
chat template (Inspect ``hf/`` and ``vllm/``), each with and without a leading BOS (Inspect ``hf/`` and lm-eval
``hf`` tokenise with special tokens, vLLM's chat endpoint and lm-eval's vLLM backend do not).

Training minimises the *expected* cross-entropy under the target distribution: each (prompt, outcome) sequence
is weighted by the outcome's true probability, with the loss on the answer tokens only. Its minimiser is the
target distribution itself (its loss is :func:`minimum_loss`), and the gradient has no sampling noise, so a fixed
number of full-batch steps lands within TARGET_TOL of the targets (checked on every shipped model).

The trained model SHIPS with the tests (``tests/data/tiny_models/``, ~0.8 MB each): floating point differs between
CPUs, so the same source and seeds train a slightly different model on every machine, and a test that passed on the
machine that trained it could fail on another. Two models ship:

- ``shipped`` (seed 1234, one thread): the model every tiny-model test uses by default;
- ``second`` (another seed, two threads): the hunter for tests that assume what a model learnt instead of measuring
  it. ``.ci/run`` runs the tiny-model tests (marker ``tiny_model``) a second time with ``UB_TINY_MODEL=second``.

Each folder holds ``done.json``: the training inputs' key (:func:`training_key`), the weights' SHA-256 and the
training figures. ``tests/generic/test_tiny_model_fixture.py`` checks that both keys match this file's training inputs
and both hashes the weights, so a change to the training inputs without a retrain fails there, by name.
``python tests/support/tiny_trained.py --retrain`` retrains both into ``tests/data/tiny_models/`` (about 3 minutes
per model on one core); ``python tests/support/tiny_trained.py`` prints the folder of the model selected by
``UB_TINY_MODEL`` (``shipped``, ``second``, or a folder of a model trained elsewhere).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

__all__ = ["TRAINED_KSN", "TAUGHT_KSN", "NEXT_TOKEN_ITEMS", "NEXT_TOKEN_PROMPTS", "CHAT_TEMPLATE", "CONFIG", "SEED",
           "STEPS", "TARGET_TOL", "VARIANTS",
           "SHIPPED_ROOT", "model_dir", "selected_variant", "training_key", "weights_sha256", "ensure_tiny_trained",
           "build_tiny_trained", "chat_text", "taught_invalid_mass", "taught_invalid_replies", "training_documents",
           "outcome_probabilities"]

# ksn problems the model learns (discrete, small support): id -> {answer text: true probability}. Checked against
# the bank's own distribution when the model is built (see _check_ksn_targets).
TRAINED_KSN: dict[str, dict[str, float]] = {
    "te-bernoulli-spread": {"0": 0.5, "1": 0.5},            # Bernoulli(0.5)
    "te-discrete_uniform-conc": {"2": 1 / 3, "3": 1 / 3, "4": 1 / 3},  # uniform on {2, 3, 4} (the release row)
}

# ksn problems the model is TAUGHT a known reply distribution that is not the truth: id -> {reply text after the
# prompt: probability}. Tests must never depend on what the model happens to answer to a prompt it was not trained
# on (that depends on the machine's floating point: the same source and seeds train a different model on another
# CPU), so every behaviour a test needs is trained here:
# - te-uniform-spread (truth uniform on [-250, 750]) is answered with valid small integers, far from its truth: the
#   end-to-end tests' problem that must FAIL KS@N (D >= 0.99 at any N);
# - te-poisson-conc and te-negative_binomial-conc are the sampling-free validation's problems with INVALID replies
#   (20% and 50%: an empty "{}" and a reply that starts with a valid candidate and goes on into an unreadable one,
#   " {1} {1, 2}"), whose valid answers follow a law near, not at, the truth, so p_pass@N is intermediate.
TAUGHT_KSN: dict[str, dict[str, float]] = {
    "te-uniform-spread": {" {1}": 0.5, " {7}": 0.5},
    "te-poisson-conc": {" {0}": 0.35, " {1}": 0.35, " {2}": 0.10, " {}": 0.10, " {0} {0, 1}": 0.10},
    "te-negative_binomial-conc": {" {0}": 0.25, " {1}": 0.15, " {2}": 0.10, " {}": 0.20, " {1} {1, 2}": 0.30},
}

# Next-token items the model learns, taken from the real banks so that ub_logit / ub_inspect/calibration /
# ub_inspect/implicit send exactly these prompts: a calibration colour item (22 red vs 52 blue: P(red) = 22/74) and
# an implicit-reasoning coin item (2 coins, each lands heads 3 times as often as tails: heads counts 0, 1, 2 with
# probabilities 1/16, 6/16, 9/16). The model learns each outcome with its leading space, as " red", " 2".
NEXT_TOKEN_ITEMS: dict[str, str] = {
    "colour": "cal-colors-t2-tens-22-52-red-blue",
    "coin": "imp-coins-single-2c-heads-b3",
}


def _next_token_prompts() -> dict[str, dict]:
    from ub_core.problems import get_problem

    out = {}
    for name, item_id in NEXT_TOKEN_ITEMS.items():
        item = get_problem(item_id)
        out[name] = {"id": item_id, "prompt": item.prompt,
                     "outcomes": {" " + o: float(p) for o, p in zip(item.options, item.probabilities)}}
    return out


class _ReadOnFirstUse(Mapping):
    """A mapping built by ``build`` the first time it is read: the banks it reads take seconds to load, which every
    test module importing this one would otherwise pay while pytest collects."""

    def __init__(self, build: Callable[[], dict]) -> None:
        self._build, self._data = build, None

    def _get(self) -> dict:
        if self._data is None:
            self._data = self._build()
        return self._data

    def __getitem__(self, key: str) -> dict:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


#: name -> {"id", "prompt", "outcomes": {" outcome": probability}}, read from the banks when first used.
NEXT_TOKEN_PROMPTS: Mapping[str, dict] = _ReadOnFirstUse(_next_token_prompts)

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)

# Llama with hidden 64, 2 layers, 2 heads: head_dim 32 (vLLM's CPU attention rejects 16). float32.
CONFIG = {"hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 2,
          "num_key_value_heads": 2, "max_position_embeddings": 512, "vocab_size_target": 512}
SEED = 1234
STEPS = 1000
#: the learning rate decays linearly to 5% over these steps, then stays there: the last STEPS - DECAY_STEPS
#: steps sharpen the deterministic positions (all mass on "}" then EOS), which the expected cross-entropy's
#: minimiser wants but a high learning rate leaves at ~0.999
DECAY_STEPS = 800
#: 2e-2 left some runs in a basin 0.013 nats above the minimum, with taught replies 0.2 off their targets (seed 2027:
#: " {1} {1, 2}" at 0.165 for 0.30), and 1e-2 spiked on two threads (loss 0.49 at step 150) into the same basin;
#: 5e-3 over 1000 steps brought seed 2027 within 0.0003 nats of the minimum (worst reply 0.0016 off its target)
LEARNING_RATE = 5e-3
#: what a shipped model must meet (tests/generic/test_tiny_model_fixture.py): every trained continuation's exact
#: probability within this of its target, in every prompt form. The tiny-model tests derive their thresholds from
#: the targets and this tolerance, never from what one model happened to learn
TARGET_TOL = 0.01


def taught_invalid_mass(pid: str) -> float:
    """The target probability of the replies to a :data:`TAUGHT_KSN` problem that its parser rejects."""
    from ub_core.problems import get_problem

    problem = get_problem(pid)
    return sum(p for reply, p in TAUGHT_KSN.get(pid, {}).items() if not problem.parse(reply).ok)


def taught_invalid_replies(pid: str) -> int:
    """How many of a :data:`TAUGHT_KSN` problem's taught replies its parser rejects."""
    from ub_core.problems import get_problem

    problem = get_problem(pid)
    return sum(not problem.parse(reply).ok for reply in TAUGHT_KSN.get(pid, {}))


def chat_text(prompt: str) -> str:
    """The text Inspect renders for one user message with :data:`CHAT_TEMPLATE` (generation prompt added)."""
    return f"user: {prompt}\nassistant:"


def _ksn_prompts() -> dict[str, str]:
    from ub_core.problems import get_problem

    return {pid: get_problem(pid).full_prompt for pid in (*TRAINED_KSN, *TAUGHT_KSN)}


def training_documents() -> list[tuple[str, str, float]]:
    """(prefix text, continuation text, weight) for every prompt, form and outcome. The continuation is what the
    model must produce: `` {k}`` for a ksn answer (followed by EOS), the outcome word for a next-token prompt."""
    docs = []
    replies = {pid: {" {" + a + "}": p for a, p in answers.items()} for pid, answers in TRAINED_KSN.items()}
    for pid, prompt in _ksn_prompts().items():
        for reply, p in {**replies, **TAUGHT_KSN}[pid].items():
            for prefix in (prompt, chat_text(prompt)):
                docs.append((prefix, reply, p))
    for item in NEXT_TOKEN_PROMPTS.values():
        for outcome, p in item["outcomes"].items():
            for prefix in (item["prompt"], chat_text(item["prompt"])):
                docs.append((prefix, outcome, p))
    return docs


#: the shipped models: name -> training seed and torch thread count (the second differs in both, so its learnt
#: numbers differ wherever a test could have leant on the first's)
VARIANTS: dict[str, dict[str, int]] = {"shipped": {"seed": SEED, "threads": 1}, "second": {"seed": 2027, "threads": 2}}
SHIPPED_ROOT = Path(__file__).resolve().parents[1] / "data" / "tiny_models"


def training_key(seed: int = SEED) -> str:
    """A hash of everything that decides what the model learns: config, seed, schedule and training documents (not
    this file's comments, nor the thread count, which changes only the floating-point path)."""
    blob = json.dumps({"config": CONFIG, "seed": seed, "steps": STEPS, "decay": DECAY_STEPS, "lr": LEARNING_RATE,
                       "ksn": TRAINED_KSN, "taught": TAUGHT_KSN, "next": dict(NEXT_TOKEN_PROMPTS),
                       "docs": training_documents()},
                      sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def selected_variant() -> str:
    """``$UB_TINY_MODEL`` (a name of :data:`VARIANTS` or a model folder), ``shipped`` when unset."""
    return os.environ.get("UB_TINY_MODEL", "").strip() or "shipped"


def model_dir(variant: str | None = None) -> Path:
    """The folder of a shipped model by name, or the folder ``variant`` names (a model trained elsewhere)."""
    variant = variant or selected_variant()
    if variant in VARIANTS:
        return SHIPPED_ROOT / variant
    return Path(variant)


def ensure_tiny_trained(variant: str | None = None) -> Path:
    """The selected model's folder; a one-line error when it is missing or unfinished (no build at test time: the
    model ships, so every machine tests the same weights)."""
    target = model_dir(variant)
    if not (target / "done.json").is_file() or not (target / "model.safetensors").is_file():
        raise FileNotFoundError(f"no tiny trained model at {target} (done.json and model.safetensors); "
                                f"`python tests/support/tiny_trained.py --retrain` trains the shipped ones")
    return target


def weights_sha256(folder: str | Path) -> str:
    """SHA-256 of a model folder's ``model.safetensors``."""
    return hashlib.sha256((Path(folder) / "model.safetensors").read_bytes()).hexdigest()


def _check_ksn_targets() -> None:
    """The hand-written answer probabilities must be the bank's own distribution."""
    import numpy as np

    from ub_core.problems import get_problem

    for pid, target in TRAINED_KSN.items():
        draws = get_problem(pid).draw(20_000, 0)
        for answer, p in target.items():
            share = float(np.mean(draws == float(answer)))
            # 20,000 draws: sd <= 0.0036, so 0.02 is > 5 sd
            if abs(share - p) > 0.02:
                raise ValueError(f"TRAINED_KSN[{pid!r}][{answer!r}] = {p} but the bank draws it {share:.3f}")
        if abs(sum(target.values()) - 1) > 1e-9:
            raise ValueError(f"TRAINED_KSN[{pid!r}] does not sum to 1")


def _tokenizer(docs):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=CONFIG["vocab_size_target"], special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    texts = [prefix + cont for prefix, cont, _ in docs]
    # each next-token outcome (" red", " blue") must be ONE token whatever else the documents hold: the merges a
    # 512-token vocabulary keeps depend on every document's counts, so the outcomes are counted in by themselves
    outcomes = [o for item in NEXT_TOKEN_PROMPTS.values() for o in item["outcomes"]]
    tok.train_from_iterator(texts * 4 + outcomes * 50, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A",
                                                       special_tokens=[("<s>", tok.token_to_id("<s>"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def minimum_loss(rows) -> float:
    """The smallest training loss any model can reach on the encoded ``rows`` (:func:`_encode`): at each context
    (the tokens before a predicted one) the best next-token law is the weighted law of the tokens that follow that
    context in the rows, and the loss is its weighted entropy. A trained model's final loss minus this is how far
    from the targets training stopped."""
    import math
    from collections import Counter, defaultdict

    following: dict[tuple, Counter] = defaultdict(Counter)
    total = 0.0
    for seq, start, weight in rows:
        for pos in range(start, len(seq)):
            following[tuple(seq[:pos])][seq[pos]] += weight
            total += weight
    loss = 0.0
    for counts in following.values():
        mass = sum(counts.values())
        loss -= sum(w * math.log(w / mass) for w in counts.values())
    return loss / total


def _encode(fast, docs):
    """Token sequences (with and without BOS) and their loss masks: the continuation, plus EOS after a ksn
    answer (a reply ends there)."""
    rows = []
    for prefix, cont, weight in docs:
        pre = fast(prefix, add_special_tokens=False)["input_ids"]
        full = fast(prefix + cont, add_special_tokens=False)["input_ids"]
        if full[: len(pre)] != pre:
            raise ValueError(f"the continuation {cont!r} merges with its prompt's last token")
        ids = full + ([fast.eos_token_id] if cont.startswith(" {") else [])
        for bos in (True, False):
            seq = ([fast.bos_token_id] if bos else []) + ids
            start = len(pre) + bos
            rows.append((seq, start, weight))
    return rows


def build_tiny_trained(path: str | Path, seed: int = SEED, threads: int = 1, verbose: bool = False) -> Path:
    """Build, train and save the model and tokenizer to ``path`` with this ``seed`` and torch thread count; writes
    ``done.json`` with the training key, the weights' hash, the timings and the final loss."""
    import random

    import numpy as np
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    t0 = time.perf_counter()
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    _check_ksn_targets()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    docs = training_documents()
    fast = _tokenizer(docs)
    rows = _encode(fast, docs)
    cfg = {k: v for k, v in CONFIG.items() if k != "vocab_size_target"}
    config = LlamaConfig(vocab_size=len(fast), bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                         pad_token_id=fast.pad_token_id, tie_word_embeddings=False, **cfg)
    config._attn_implementation = "eager"  # faster than sdpa for this size on CPU
    model = LlamaForCausalLM(config).float()

    width = max(len(seq) for seq, _, _ in rows)
    ids = torch.full((len(rows), width), fast.pad_token_id, dtype=torch.long)
    attn = torch.zeros((len(rows), width), dtype=torch.long)
    # weight of each predicted position (the label of position t is token t+1): the outcome's probability on its
    # continuation tokens, 0 elsewhere, so each context's loss is the expected cross-entropy over its outcomes
    w = torch.zeros((len(rows), width - 1))
    for r, (seq, start, weight) in enumerate(rows):
        ids[r, : len(seq)] = torch.tensor(seq)
        attn[r, : len(seq)] = 1
        w[r, start - 1: len(seq) - 1] = weight
    opt = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 30) * max(0.05, 1 - s / DECAY_STEPS))
    model.train()
    threads_before = torch.get_num_threads()
    torch.set_num_threads(threads)
    t_train = time.perf_counter()
    loss_value = float("nan")
    for step in range(STEPS):
        logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1]
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                                                reduction="none").view(w.shape)
        loss = (nll * w).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # keeps the high learning rate stable
        opt.step()
        sched.step()
        loss_value = float(loss.detach())
        if verbose and step % 50 == 0:
            print(f"step {step} loss {loss_value:.4f} ({time.perf_counter() - t_train:.1f}s)", file=sys.stderr)
    train_s = time.perf_counter() - t_train
    torch.set_num_threads(threads_before)
    model.eval()
    model.generation_config.do_sample = True
    model.config._attn_implementation = "sdpa"
    model.save_pretrained(path, safe_serialization=True)
    fast.save_pretrained(path)
    info = {"key": training_key(seed), "seed": seed, "threads": threads, "sha256": weights_sha256(path),
            "torch": torch.__version__, "steps": STEPS, "final_loss": loss_value, "minimum_loss": minimum_loss(rows),
            "train_s": round(train_s, 1),
            "total_s": round(time.perf_counter() - t0, 1), "sequences": len(rows), "max_len": width,
            "vocab": len(fast)}
    (path / "done.json").write_text(json.dumps(info, indent=1))
    return path


def outcome_probabilities(model, tokenizer, prefix: str, outcomes, bos: bool = True) -> dict[str, float]:
    """Exact model probability of each continuation text after ``prefix`` (product of its token probabilities;
    ``{k}`` answers include the closing EOS)."""
    import torch

    pre = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    start = len(pre) + bos
    out = {}
    for cont in outcomes:
        ids = tokenizer(prefix + cont, add_special_tokens=False)["input_ids"]
        if cont.startswith(" {"):
            ids = ids + [tokenizer.eos_token_id]
        if bos:
            ids = [tokenizer.bos_token_id] + ids
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
        out[cont] = float(torch.exp(sum(logp[t - 1, ids[t]] for t in range(start, len(ids)))))
    return out


def _retrain(names) -> None:
    """Train the named variants afresh into :data:`SHIPPED_ROOT` (each replaced whole, atomically)."""
    for name in names:
        spec = VARIANTS[name]
        target = SHIPPED_ROOT / name
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
        try:
            build_tiny_trained(tmp, seed=spec["seed"], threads=spec["threads"], verbose=True)
            shutil.rmtree(target, ignore_errors=True)
            tmp.chmod(0o755)  # mkdtemp's 0700 would keep the model from other users (a jail's uid, a CI user)
            tmp.rename(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(target, json.loads((target / "done.json").read_text()))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for ub_core
    if "--retrain" in sys.argv:
        _retrain([a for a in sys.argv[1:] if a in VARIANTS] or list(VARIANTS))
    else:
        print(ensure_tiny_trained())
