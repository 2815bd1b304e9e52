"""`python -m tactful`: the command line, as the `tactful` script runs it."""

from tactful.core.cli.main import entry

entry()
