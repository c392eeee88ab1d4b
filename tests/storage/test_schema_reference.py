"""storage/schema_reference.py: the documentation's table reference, read from the schema."""

from __future__ import annotations

from storage.schema import Base
from storage.schema_reference import COLUMN_DOCS, TABLE_DOCS, schema_reference


def test_every_table_and_column_of_the_schema_is_described_and_nothing_else():
    columns = {f"{t.name}.{c.name}" for t in Base.metadata.tables.values() for c in t.columns}
    assert set(TABLE_DOCS) == set(Base.metadata.tables)
    assert set(COLUMN_DOCS) - columns == set(), "described but not in the schema"
    assert columns - set(COLUMN_DOCS) == set(), "in the schema but not described"


def test_the_page_lists_each_column_with_its_type_and_keys():
    text = schema_reference()
    for name in Base.metadata.tables:
        assert f"## `{name}`" in text
    assert "| `study_id` | integer, -> studies.id |" in text
    assert "| `token` | varchar(32), unique, may be NULL |" in text
    assert "Unique: (`study_id`, `number`)." in text
    assert "| `heartbeat_at` | timestamp (UTC), may be NULL |" in text
