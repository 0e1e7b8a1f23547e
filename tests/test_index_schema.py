"""The compiled CREATE statements the ingest runs match the SQLAlchemy schema."""

from __future__ import annotations

from hippo_core.index import ddl, schema


def test_the_ddl_module_is_current():
    # Stale? Run: python -m hippo_core.index.schema
    assert schema.ddl() == ddl.STATEMENTS
