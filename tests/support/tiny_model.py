"""A tiny Llama-architecture model and tokenizer built from scratch (no download), for provider tests.

Byte-level BPE trained on a few hundred generated lines (digits split one per token), wrapped in
``PreTrainedTokenizerFast`` with a minimal chat template; ``LlamaForCausalLM`` with hidden size 64, 2 layers and
2 heads (head_dim 32, which vLLM's CPU attention also accepts), float32, about 0.7 MB. Untrained: its replies are
mostly unparseable, which is what the parse-failure path needs. Building takes a few seconds.
"""

from __future__ import annotations

import random
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def _corpus(seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words = ["value", "draw", "random", "answer", "number", "the", "is", "a", "of", "from", "{", "}", ",", "."]
    lines = []
    for _ in range(400):
        parts = [rng.choice(words) for _ in range(rng.randint(3, 8))]
        parts.insert(rng.randint(0, len(parts)), "{" + str(round(rng.gauss(50, 20), rng.randint(0, 2))) + "}")
        lines.append(" ".join(parts))
    return lines


def build_tiny_tokenizer(path: str | Path, seed: int = 0):
    """Write the tiny byte-level BPE tokenizer (digits split one per token) to ``path``; returns it
    (``PreTrainedTokenizerFast``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(seed), trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A",
                                                       special_tokens=[("<s>", tok.token_to_id("<s>"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(path)
    return fast


def build_tiny_llama(path: str | Path, seed: int = 0) -> Path:
    """Write a tiny untrained Llama and its tokenizer to ``path`` and return it."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = Path(path)
    fast = build_tiny_tokenizer(path, seed)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=1024,
                         bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                         pad_token_id=fast.pad_token_id, torch_dtype="float32")
    LlamaForCausalLM(config).save_pretrained(path)
    return path
