"""E-mail contacts: a memory-only platform (no adapter; tactful never sends e-mail)."""
