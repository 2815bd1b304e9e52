"""Responders: the model backends that draft text, for routines and the companion."""
