"""`python -m localeval` is the `localeval` command."""

from localeval.entry import main

main()
