"""`python -m tactful.core.cli` runs the command line (used by tests and the bench)."""

from tactful.core.cli.main import entry

entry()
