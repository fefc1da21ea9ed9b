"""``python -m plenum ...``: the command line, as the ``plenum`` command."""

from plenum._cli import main

main()
