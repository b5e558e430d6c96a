"""`python -m localeval` is the `localeval` command."""

from localeval.cli import main

main()
