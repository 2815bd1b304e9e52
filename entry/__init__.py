"""tactful: memory and manners for a persona on social platforms.

The code lives in `tactful.core`, `tactful.adapters`, `tactful.routines` and `tactful.testing`;
this package only makes `python -m tactful` run the command line.
"""
