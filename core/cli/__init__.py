"""The command line: parse, call, map errors to exit codes. Kept thin and quick to import."""
