"""The guarded send pipeline (docs/sending.md): the one way any post leaves tactful."""
