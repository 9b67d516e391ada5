"""Dataset card templates and the renderer that writes a built dataset's README.md."""
