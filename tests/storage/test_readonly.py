"""`Store.query_readonly`: reads work, every write is refused and changes nothing."""

from __future__ import annotations

import pytest

from core.errors import StorageError
from storage import Store
from storage.readonly import REFUSED, check_readonly
from tests.storage.helpers import make_result, make_run

TABLES = ("studies", "trials", "trial_metrics", "runs", "epochs")


@pytest.fixture
def filled(store: Store, study: str) -> Store:
    for value in (1.0, 2.0):
        n = store.add_trial(study, family="hourglass", config={"d_z": 9}, params=5, seeds=[0])
        store.finish_trial(study, n, make_result(n, [make_run(0, {"psnr": value})]))
    return store


def counts(store: Store) -> dict[str, int]:
    return {t: store.query_readonly(f"SELECT COUNT(*) FROM {t}")[1][0][0] for t in TABLES}


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT number, objective FROM trials ORDER BY number",
        "  select number, objective from trials order by number;  ",
        "-- best first\nSELECT number, objective FROM trials ORDER BY number; -- done",
        "WITH t AS (SELECT number, objective FROM trials) SELECT * FROM t ORDER BY number",
    ],
)
def test_reads(filled: Store, sql: str) -> None:
    cols, rows = filled.query_readonly(sql)
    assert cols == ["number", "objective"] and rows == [(0, 1.0), (1, 2.0)]


def test_limit_values_and_literals(filled: Store) -> None:
    assert filled.query_readonly("SELECT number FROM trials ORDER BY number", limit=1)[1] == [(0,)]
    cols, rows = filled.query_readonly("SELECT 'a;b' AS x, 'DROP TABLE trials' AS \"y;\"")
    assert cols == ["x", "y;"] and rows == [("a;b", "DROP TABLE trials")]
    assert filled.query_readonly("VALUES (1, 2)")[1] == [(1, 2)]
    assert filled.query_readonly("EXPLAIN SELECT * FROM trials")[1]


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO studies (name) VALUES ('x')",
        "UPDATE trials SET status = 'failed'",
        "DELETE FROM trials",
        "DROP TABLE trials",
        "ATTACH DATABASE 'other.db' AS other",
        "SELECT 1; DROP TABLE trials",
        "SELECT 1; SELECT 2",
        "WITH x AS (DELETE FROM trials RETURNING *) SELECT * FROM x",
        "WITH x AS (SELECT 1) DELETE FROM trials",
        "EXPLAIN QUERY PLAN DELETE FROM trials",
        "CREATE TABLE t (x INTEGER)",
        "ALTER TABLE trials ADD COLUMN x INTEGER",
        "REPLACE INTO studies (name) VALUES ('x')",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA user_version(7)",
        "PRAGMA optimize",
        "VACUUM",
        "BEGIN",
        "COMMIT",
        "/* SELECT */ DELETE FROM trials",
        "SELECT '1'; DELETE FROM trials; --'",
    ],
)
def test_writes_are_refused_and_change_nothing(filled: Store, sql: str) -> None:
    before = counts(filled)
    with pytest.raises(StorageError, match="^refused: "):
        filled.query_readonly(sql)
    assert counts(filled) == before
    assert filled.trials("s")[0].status == "complete"


@pytest.mark.parametrize("sql", ["", "   ", "-- nothing", ";"])
def test_empty_is_refused(filled: Store, sql: str) -> None:
    with pytest.raises(StorageError, match="empty"):
        filled.query_readonly(sql)


def test_sql_errors_are_one_line(filled: Store) -> None:
    with pytest.raises(StorageError) as info:
        filled.query_readonly("SELECT * FROM no_such_table")
    assert "no_such_table" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(StorageError):
        filled.query_readonly("SELECT FROM WHERE")
    # the connection went back to the pool writable
    filled.add_trial("s", family="f", config={}, params=1, seeds=[0])


def test_sqlite_pragmas(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Store(str(tmp_path / "p.db")) as store:
        cols, rows = store.query_readonly("PRAGMA table_info(trials)")
        assert "name" in cols and any("d_z" in r for r in rows)
        assert store.query_readonly("PRAGMA main.table_info('trials');")[1] == rows
        assert store.query_readonly("PRAGMA journal_mode")[1] == [("wal",)]
        # the read-only mode of the pooled connection is reset afterwards
        store.create_or_load_study("x", task="t", families=["f"], metric="m", direction="maximize", budget=1)


@pytest.mark.parametrize("sql", ["SELECT $$;$$", "SELECT E'\\';' "])
def test_postgres_literals_hide_semicolons(sql: str) -> None:
    assert check_readonly(sql, "postgresql") == sql.rstrip()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT $$it's$$; DROP TABLE trials; --'",
        "SELECT E'\\''; DROP TABLE trials; --'",
        "SELECT $a$ x $a$; DROP TABLE trials",
    ],
)
def test_postgres_literals_do_not_hide_code(sql: str) -> None:
    with pytest.raises(StorageError, match="refused"):
        check_readonly(sql, "postgresql")


def test_refusal_message() -> None:
    assert REFUSED == "refused: only read-only queries (SELECT/WITH/EXPLAIN) are allowed"


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM trials",
        "UPDATE trials SET status = 'failed'",
        "INSERT INTO studies (name, task, families, metric, direction, budget, settings, created_at)"
        " VALUES ('x', 't', '[]', 'm', 'maximize', 1, '{}', '2025-01-01')",
        "DROP TABLE epochs",
        "CREATE TABLE t (x INTEGER)",
    ],
)
def test_the_transaction_is_read_only(filled: Store, sql: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second line of defence: a write that got past the static check fails in the
    database (PRAGMA query_only on SQLite, a READ ONLY transaction on PostgreSQL)."""
    import storage.sql

    monkeypatch.setattr(storage.sql, "check_readonly", lambda sql, dialect: sql)
    before = counts(filled)
    with pytest.raises(StorageError) as info:
        filled.query_readonly(sql)
    assert "\n" not in str(info.value)
    monkeypatch.undo()
    assert counts(filled) == before
    assert filled.trials("s")[0].status == "complete"
    # the pooled connection is writable again
    assert filled.add_trial("s", family="f", config={}, params=1, seeds=[0]) == 2


def test_postgres_functions_that_write_are_refused(filled: Store) -> None:
    """Writes hidden in function calls pass the static check; the read-only transaction
    refuses them. (SQLite has no such functions.)"""
    if filled.dialect != "postgresql":
        return
    for sql in (
        "SELECT nextval(pg_get_serial_sequence('trials', 'id'))",
        "SELECT set_config('transaction_read_only', 'off', true), COUNT(*) FROM trials",
        "SELECT * INTO copied FROM trials",
    ):
        with pytest.raises(StorageError, match="read-only transaction|read-write mode"):
            filled.query_readonly(sql)
    assert filled.query_readonly("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'copied'")[1] == [
        (0,)
    ]
    assert filled.add_trial("s", family="f", config={}, params=1, seeds=[0]) == 2


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_a_query_is_stopped_at_its_timeout_and_the_store_goes_on(filled: Store) -> None:
    import time

    t0 = time.monotonic()
    with pytest.raises(StorageError, match=r"stopped after 0\.3 s \(--timeout\)"):
        filled.query_readonly(ENDLESS, timeout_s=0.3)
    assert time.monotonic() - t0 < 10
    # the connection went back to the pool usable and writable, without the time limit
    assert filled.query_readonly("SELECT COUNT(*) FROM trials")[1] == [(2,)]
    filled.add_trial("s", family="f", config={}, params=1, seeds=[0])
    with pytest.raises(StorageError, match="positive number of seconds"):
        filled.query_readonly("SELECT 1", timeout_s=0)


def test_huge_values_are_refused_at_once_on_sqlite(filled: Store) -> None:
    if filled.dialect != "sqlite":
        pytest.skip("SQLite's length limit; PostgreSQL stops such a query by its statement timeout")
    with pytest.raises(StorageError, match="too big"):
        filled.query_readonly("SELECT randomblob(1e9)")
    assert filled.query_readonly("SELECT length(randomblob(1000))")[1] == [(1000,)]
