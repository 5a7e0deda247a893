"""The ``mapeval`` command line: the program (:mod:`mapping.cli.main`), its inputs,
options, stated limits, diagnostics and one module per subcommand."""
