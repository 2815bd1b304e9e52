"""facebook package."""
