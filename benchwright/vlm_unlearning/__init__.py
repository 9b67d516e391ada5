"""Modality-decomposed VLM unlearning sets, domain code (no Beam): sources, the three views, routing."""
