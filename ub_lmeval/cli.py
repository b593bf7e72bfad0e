"""``ub-lm-eval``: lm_eval's command line, unchanged, with our task folder and models added.

Same arguments as ``lm_eval``; ``--include_path`` defaults to our task folder (a user-given one is kept, and
ours is added beside it through lm-eval's comma-separated list only when the user gave none). Our models:
``ub-oracle``, ``ub-collapse``, ``ub-vllm``, and ``ub-openai-completions`` / ``ub-openai-chat`` for an existing
OpenAI-compatible server (a document's repeats as one ``n=N`` request; see ``ub_lmeval.openai_models``). A server
that keeps failing ends the run with one line naming the endpoint and the cause (exit status 1).
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

    from .openai_models import ServerError

    sys.argv = ["lm_eval", *argv]
    try:
        cli_evaluate()
    except ServerError as e:  # the server failed after its retries: the error names the endpoint and the cause
        print(f"ub-lm-eval: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
