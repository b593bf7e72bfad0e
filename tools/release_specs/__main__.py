"""``python -m tools.release_specs``: see :mod:`tools.release_specs.cli`."""
from .cli import main

main()
