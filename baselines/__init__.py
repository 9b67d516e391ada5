"""Baseline model heads that consume the loaders."""
