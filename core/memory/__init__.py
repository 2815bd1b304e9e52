"""Memory, the ground floor: person files, identity, privacy, the card. Imports no pipeline or SDK."""
