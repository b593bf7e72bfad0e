"""Tools for the official UnpredictaBench release.

- :mod:`.official`: read a release checkout (problems, ground-truth values) into this package's problems;
- :mod:`.official_truth`: ``ub official truth``, which runs the release's ground-truth programs;
- :mod:`.jail`: the bubblewrap jail, seccomp filter and whole-program limits those programs run under;
- :mod:`.official_output`: the streaming reader of what a program prints.

The readers of hostile input they rest on (JSON, files) are the gate, :mod:`ub_core.untrusted`, one layer below
everything that reads a path (the cache included).
"""
