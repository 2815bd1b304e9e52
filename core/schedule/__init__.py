"""Routines and their schedule: what `tactful routine` and `tactful run` drive."""
