"""The guarded send pipeline (SPEC §10): the one way any post leaves tactful."""
