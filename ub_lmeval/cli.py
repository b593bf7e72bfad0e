"""``ub-lm-eval``: lm_eval's command line, unchanged, with our task folder and models added.

Same arguments as ``lm_eval``; ``--include_path`` defaults to our task folder (a user-given one is kept, and
ours is added beside it through lm-eval's comma-separated list only when the user gave none). Our models:
``ub-oracle``, ``ub-collapse``, ``ub-vllm``, and ``ub-openai-completions`` / ``ub-openai-chat`` for an existing
OpenAI-compatible server (a document's repeats as one ``n=N`` request; see ``ub_lmeval.openai_models``).
"""

from __future__ import annotations

import sys

from . import tasks_dir


def main() -> None:
    from . import models  # noqa: F401  (register our models, ub-openai-* included, before lm_eval parses --model)

    argv = sys.argv[1:]
    if not any(a == "--include_path" or a.startswith("--include_path=") for a in argv):
        argv = ["--include_path", str(tasks_dir()), *argv]
    from lm_eval.__main__ import cli_evaluate

    sys.argv = ["lm_eval", *argv]
    cli_evaluate()


if __name__ == "__main__":  # pragma: no cover
    main()
