"""The tests: a package, so that plain `pytest` and `python -m pytest` both import `tests.*` from the repository root."""
