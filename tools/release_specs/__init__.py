"""Static extraction of the UnpredictaBench release's ground-truth programs into family specs (analysis tooling,
not part of the installed package).

Every program under ``ground_truth_codes/<task folder>/<uid>.py`` of the release is parsed with :mod:`ast` and
NEVER executed. Modules, in the order of the pipeline: :mod:`.release` (git I/O), :mod:`.registry` (our families),
:mod:`.symbolic`, :mod:`.samplers`, :mod:`.folding`, :mod:`.statements` (symbolic evaluation), :mod:`.laws`,
:mod:`.equivalences` (classification rules), :mod:`.program` (one program), :mod:`.realworld` (hand-derived
real-world laws), :mod:`.specs` (the table), :mod:`.summary` (``SUMMARY.md``), :mod:`.cli`.
"""
