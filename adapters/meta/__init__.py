"""Meta's platforms: Threads, Instagram and Facebook, which speak one Graph API dialect.

The family shares `graph.py` (offline Graph facts), `graph_session.py` (the httpx session base)
and `graph_emulator.py` (the emulator base) so those conventions are held once. Each platform
is its own plugin in a sub-package; sub-packages import the family's shared modules and never
one another (docs/adapters/meta.md).
"""
