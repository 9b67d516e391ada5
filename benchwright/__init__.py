"""benchwright: Apache Beam pipelines that build, validate, load and evaluate benchmark datasets."""

__version__ = "0.1.0"
