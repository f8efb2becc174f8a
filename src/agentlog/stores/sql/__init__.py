"""SQL stores: the row codec, the repair cut and ``SqlBackend``, their shared template.

SQLite and PostgreSQL subclass ``SqlBackend`` with their placeholder style, BEGIN statement and
error mapping (see ``agentlog.stores.sql.backend``).
"""

from __future__ import annotations

from agentlog.stores.sql.backend import COMPRESS_FROM, SqlBackend

__all__ = ["COMPRESS_FROM", "SqlBackend"]
