"""The package version: the one place it is written (pyproject.toml reads it from here)."""

__version__ = "0.1.0"
"""The package's version, as `ndcg-report --version` prints it and `summary.json` records it.

Examples
--------
>>> isinstance(__version__, str)
True
"""
