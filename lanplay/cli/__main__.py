"""`python -m lanplay.cli`: the same as the `lanplay` command."""

from lanplay.cli.commands import main

raise SystemExit(main())
