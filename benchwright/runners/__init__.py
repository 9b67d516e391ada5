"""Runners benchwright carries fixes for (imported on the workers too: keep them in the installed package)."""
