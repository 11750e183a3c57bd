"""Shared test helpers, imported as a package: ``from tests.kit import ...``.

pytest puts the repository root on sys.path (``pythonpath`` in pyproject.toml),
so no test edits sys.path to find these.
"""
