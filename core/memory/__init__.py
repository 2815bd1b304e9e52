"""Memory, the ground floor: person files, identity, privacy, the card.

It imports no pipeline, no command line and no platform SDK.
"""
