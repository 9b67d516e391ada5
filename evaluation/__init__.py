"""Metrics and evaluators per dataset."""
