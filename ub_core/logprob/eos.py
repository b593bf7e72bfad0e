"""The text that ends a model's reply: one rule for both frameworks.

Sampling-free scoring needs the end of a reply (a candidate followed by it is the whole reply, and a node of the
reply tree whose next token is it is a finished reply). Models mark it with their end-of-sequence token, whose
text (``</s>``, ``<|im_end|>``, ``<|eot_id|>``) a completions server and a tokenizer both read back as that token.
The offline models (``ub/oracle``, ``ub-oracle``, ...) have no tokenizer: their end is :data:`OFFLINE_EOS`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OFFLINE_EOS", "eos_text", "load_local_tokenizer"]

#: The end-of-sequence text of the offline models (``ub/oracle``, ``ub-oracle``, ...): they have no tokenizer.
OFFLINE_EOS = "</s>"


def load_local_tokenizer(name: str, what: str = "chat_template", trust_remote_code: bool = False):
    """The tokenizer of ``name`` (a local folder or a hub id already in the local cache; nothing is downloaded).
    A one-line ``ValueError`` naming the option ``what`` it was loaded for when it cannot be loaded."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(name), local_files_only=True, trust_remote_code=trust_remote_code)
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the user
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{what}: cannot load the tokenizer {name!r} from local files ({first})") from None


def eos_text(tokenizer: Any = None, name: str | None = None, what: str = "end_of_answer=eos") -> str:
    """The end-of-sequence text of ``tokenizer``, else of the tokenizer of ``name`` (a local folder or a cached
    hub id, :func:`load_local_tokenizer`). A one-line ``ValueError`` naming the option ``what`` when neither is
    given, the tokenizer cannot be loaded, or it has no end-of-sequence token."""
    if tokenizer is None:
        if not name:
            raise ValueError(f"{what}: no tokenizer to read the end-of-sequence token from")
        tokenizer = load_local_tokenizer(str(name), what)
    eos = getattr(tokenizer, "eos_token", None)
    if not isinstance(eos, str) or not eos:
        label = name or getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
        raise ValueError(f"{what}: the tokenizer {label!r} has no end-of-sequence token")
    return eos
