"""Beam pipelines: one module per dataset, plus the transforms they share."""
