"""Workspace-Bench domain code (no Beam): the synthetic release, scanning, dependency extraction,
task records, the Lite rule."""
