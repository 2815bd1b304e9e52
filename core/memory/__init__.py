"""Memory, the ground floor: person files, identity, privacy, the card.

It imports nothing of tactful but itself and `tactful.core.errors`: no pipeline, no command line,
no platform SDK, and it names no platform. What it must know of platforms comes from its own
registry (`platforms.py`), which the adapter plugins fill; the stores beyond its files (the
ledger, the inbox, the companion's) register with its forget (`forgetting.register_store`).
"""
