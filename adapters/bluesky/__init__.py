"""bluesky package."""
