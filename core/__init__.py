"""tactful's core: memory, the guarded pipeline and the command line. Knows no platform."""
