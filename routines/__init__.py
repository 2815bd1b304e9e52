"""routines package."""
