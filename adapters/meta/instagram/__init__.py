"""instagram package."""
