"""Synthetic generators: each writes a dataset's real raw layout to disk."""
