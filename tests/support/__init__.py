"""Helpers shared by the test suites, one module per area (``support.agent``,
``support.sessions``, ``support.fault_server``, ...).  ``tests/`` is on
``sys.path`` (``pythonpath`` in pyproject.toml), so a test imports
``from support.agent import make_config``.  Fixtures stay in each folder's
``conftest.py``."""
