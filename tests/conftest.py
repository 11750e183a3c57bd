"""Fixtures shared by every test folder live here; helpers are the package tests.kit.

Test helpers are imported as ``tests.<folder>.<module>`` (pytest puts the repository
root on sys.path through ``pythonpath`` in pyproject.toml); no test edits sys.path.
"""
