"""Tools for the official UnpredictaBench release, and the readers of outside input they rest on.

- :mod:`.official`: read a release checkout (problems, ground-truth values) into this package's problems;
- :mod:`.official_truth`: ``ub official truth``, which runs the release's ground-truth programs;
- :mod:`.jail`: the bubblewrap jail, seccomp filter and whole-program limits those programs run under;
- :mod:`.official_output`: the streaming reader of what a program prints;
- :mod:`.untrusted`: the shared readers of hostile input (JSON, files), also used by the scorers and reports.
"""
