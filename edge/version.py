"""gpuplan's version: pyproject.toml reads it from here (setuptools dynamic version), and
the CLI and the disk cache read it without importlib.metadata's start-up cost."""

VERSION = "0.2.0"
