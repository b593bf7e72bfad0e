"""Release I/O: the release checkout or bare mirror, read with ``git`` (``ls-tree``, ``show``, ``cat-file --batch``);
task folders, uid provenance and the generation prompts."""
from __future__ import annotations

import json
import os
import re
import subprocess
import uuid


# The release checkout or bare mirror: set by the command line (``--mirror DIR``) or ``$UB_RELEASE_MIRROR``;
# no default, since a default path would silently read whatever is there on another machine.
MIRROR = os.environ.get("UB_RELEASE_MIRROR", "")



def git(*args: str) -> str:
    return subprocess.run(["git", "-C", MIRROR, *args], capture_output=True, text=True, check=True).stdout


def read_blobs(paths_to_sha: dict[str, str]) -> dict[str, str]:
    """Read many blobs at once with ``git cat-file --batch``."""
    shas = list(paths_to_sha.values())
    proc = subprocess.run(["git", "-C", MIRROR, "cat-file", "--batch"], input=("\n".join(shas) + "\n").encode(),
                          capture_output=True, check=True)
    data = proc.stdout
    out_by_sha: dict[str, str] = {}
    pos = 0
    for sha in shas:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode().split()
        size = int(header[2])
        out_by_sha[sha] = data[nl + 1: nl + 1 + size].decode("utf-8")
        pos = nl + 1 + size + 1
    return {p: out_by_sha[s] for p, s in paths_to_sha.items()}


def list_programs() -> dict[str, str]:
    out = {}
    for line in git("ls-tree", "-r", "HEAD", "ground_truth_codes").splitlines():
        meta, path = line.split("\t", 1)
        if path.endswith(".py"):
            out[path] = meta.split()[2]
    return out


TASK_PREFIX = {"textual_explicit": "text_explicit", "textual_implicit": "text_implicit",
               "code_explicit": "code_explicit", "code_implicit": "code_implicit",
               "textual_multimodal_explicit": "multimodal"}


def folder_meta(folder: str) -> tuple[str, str | None]:
    if folder == "realworld_human":
        return "real_world", None
    if folder == "shuffling_human":
        return "shuffling", None
    m = re.match(r"^(.*)_(concentrated|spread_out)_gpt-5\.4$", folder)
    if not m or m.group(1) not in TASK_PREFIX:
        raise ValueError(f"unknown task folder {folder}")
    return TASK_PREFIX[m.group(1)], m.group(2)


def uid_index(folders: list[str], limit: int = 200) -> dict[str, tuple[str, int]]:
    """uid -> (folder, index): the release derives uids as uuid5(NAMESPACE_URL, '<folder>/questions.json:<i>')."""
    table = {}
    for f in folders:
        for i in range(limit):
            table[str(uuid.uuid5(uuid.NAMESPACE_URL, f"{f}/questions.json:{i}"))] = (f, i)
    return table


def load_prompts(folder: str) -> list[dict] | None:
    name = folder.replace("_gpt-5.4", "")
    try:
        return json.loads(git("show", f"HEAD:prompts/{name}_prompts.json"))
    except subprocess.CalledProcessError:
        return None


SUBCAT_TO_FAMILY = {
    "Beta": "beta", "Triangular": "triangular", "Truncated Normal": "truncated_normal", "Uniform": "uniform",
    "Reciprocal": "reciprocal", "Arcsine": "arcsine", "Erlang": "erlang", "F": "f", "Gamma": "gamma",
    "Pareto": "pareto", "Weibull": "weibull", "Chi Squared": "chi_squared", "Exponential": "exponential",
    "Inverse Gaussian": "inverse_gaussian", "Log Normal": "log_normal", "Rayleigh Mixture": "rayleigh_mixture",
    "Fréchet": "frechet", "Gumbel": "gumbel", "Laplace": "laplace", "Student's T": "students_t",
    "Logistic": "logistic", "Normal": "normal", "Bernoulli": "bernoulli", "Poisson Binomial": "poisson_binomial",
    "Beta Binomial": "beta_binomial", "Binomial": "binomial", "Discrete Uniform": "discrete_uniform",
    "Hypergeometric": "hypergeometric", "Poisson": "poisson", "Skellam": "skellam", "Geometric": "geometric",
    "Negative Binomial": "negative_binomial", "Compound Poisson": "compound_poisson", "Dirichlet": "dirichlet",
    "Multinomial": "multinomial", "Multivariate Normal": "multivariate_normal", "Multivariate T": "multivariate_t",
    "Negative Multinomial": "negative_multinomial", "Categorical": "categorical",
    "Rectified Gaussian": "rectified_gaussian",
}
