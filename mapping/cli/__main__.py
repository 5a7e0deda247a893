"""``python -m mapping.cli``: the ``mapeval`` command."""
from mapping.cli.main import main

raise SystemExit(main())
