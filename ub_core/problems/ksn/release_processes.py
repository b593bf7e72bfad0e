"""The process of every generated problem of the public UnpredictaBench release, uid for uid.

``release_processes.json`` (package data) is written by ``tools/release_specs/build_processes.py`` from a static
reading of the release's ground-truth programs (``ground_truth_codes/<task folder>/<uid>.py``). One record per
generated release row:

- ``uid``; ``uid_folder`` and ``row``, the uid's own (uid = uuid5(NAMESPACE_URL, "<uid_folder>/questions.json:<row>"));
- ``folder``, the task folder the program is filed in, and ``category``, which follows it (two code-explicit programs
  are filed in the code-implicit folder);
- ``regime`` (``concentrated`` / ``spread``); ``slot`` and ``release_name``, the table-10 family the release's
  prompt list names for the row (``prompts/<kind>_<regime>_prompts.json``);
- ``family`` and ``params``, what the program samples, in our registry's terms (:mod:`ub_core.distributions`): the
  truth, also where it is not the slot's family (``note`` then says so).
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["RELEASE_PROCESSES"]

RELEASE_PROCESSES: tuple[dict, ...] = tuple(
    json.loads(resources.files(__package__).joinpath("release_processes.json").read_text(encoding="utf-8")))
