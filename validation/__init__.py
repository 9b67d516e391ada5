"""Record checks used by pipelines, table-level great-expectations suites, the build report."""
