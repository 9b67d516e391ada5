"""Template: short labelled texts read from JSON Lines, the dataset ``benchwright new NAME`` copies (its modules:
``README.md`` beside this file)."""
