"""threads package."""
