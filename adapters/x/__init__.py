"""x package."""
