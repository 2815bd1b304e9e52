"""telegram package."""
