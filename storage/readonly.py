"""Static checks that a user's SQL is one read-only statement (first line of defence).

The store also runs the statement in a read-only transaction and rolls it back; this
module only decides what is even tried. It scans the text the way the database's lexer
would (strings, quoted identifiers, comments, PostgreSQL E'' and $$ strings), so a `;` or
a keyword inside a literal is not mistaken for code, and code is never hidden as a
literal.
"""

from __future__ import annotations

import re

from core.errors import StorageError

REFUSED = "refused: only read-only queries (SELECT/WITH/EXPLAIN) are allowed"

_FIRST_WORDS = {"SELECT", "WITH", "EXPLAIN", "VALUES"}
# Words that only appear in statements that write or control transactions.
_WRITE_WORDS = {
    "INSERT",
    "UPDATE",
    "DELETE",
    "DROP",
    "CREATE",
    "ALTER",
    "ATTACH",
    "DETACH",
    "TRUNCATE",
    "GRANT",
    "REVOKE",
    "VACUUM",
    "REINDEX",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT",
}
# SQLite pragmas that only read; those in _PRAGMAS_WITH_ARG may take "(name)".
_PRAGMAS_WITH_ARG = {
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
}
_READ_PRAGMAS = _PRAGMAS_WITH_ARG | {
    "database_list",
    "compile_options",
    "journal_mode",
    "user_version",
    "schema_version",
    "application_id",
    "page_count",
    "page_size",
    "freelist_count",
    "foreign_keys",
    "busy_timeout",
    "query_only",
    "encoding",
    "collation_list",
    "function_list",
    "pragma_list",
    "module_list",
    "data_version",
    "synchronous",
    "auto_vacuum",
}
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*)?\$")
_LITERAL = "\x00"
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_$\x80-\U0010ffff]")


def _code_only(sql: str, dialect: str) -> str:
    """`sql` of the same length with comments blanked to spaces and every literal or
    quoted identifier to _LITERAL (not whitespace, so `rstrip` keeps it)."""
    out: list[str] = []
    i, n = 0, len(sql)
    pg = dialect == "postgresql"
    while i < n:
        start, c = i, sql[i]
        prev = sql[i - 1] if i else ""
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
            out.append(" " * (i - start))
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            if j < 0:
                raise StorageError("unterminated /* comment in the query")
            i = j + 2
            out.append(" " * (i - start))
        elif c in "'\"`" or (c == "[" and not pg):
            i = _end_of_quoted(sql, i, escapes=pg and c == "'" and _is_e_prefix(sql, i))
            out.append(_LITERAL * (i - start))
        elif pg and c == "$" and not _IDENT_CHAR.match(prev) and (m := _DOLLAR_TAG.match(sql, i)):
            tag = m.group(0)
            j = sql.find(tag, i + len(tag))
            if j < 0:
                raise StorageError("unterminated $-quoted text in the query")
            i = j + len(tag)
            out.append(_LITERAL * (i - start))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_e_prefix(sql: str, i: int) -> bool:
    """Whether the quote at `i` opens a PostgreSQL E'...' string (backslash escapes)."""
    return i >= 1 and sql[i - 1] in "eE" and (i < 2 or not _IDENT_CHAR.match(sql[i - 2]))


def _end_of_quoted(sql: str, i: int, *, escapes: bool) -> int:
    """The index just past the quoted text opening at `i` ('', "", ``, [])."""
    close = "]" if sql[i] == "[" else sql[i]
    j = i + 1
    while j < len(sql):
        if escapes and sql[j] == "\\":
            j += 2
        elif sql[j] != close:
            j += 1
        elif close != "]" and sql.startswith(close * 2, j):
            j += 2  # a doubled quote is an escaped quote
        else:
            return j + 1
    raise StorageError("unterminated quoted text in the query")


def check_readonly(sql: str, dialect: str) -> str:
    """Return the statement to run (trailing `;` removed) or raise StorageError."""
    if not sql or not sql.strip():
        raise StorageError("refused: the query is empty")
    code = _code_only(sql, dialect)
    body = code.rstrip()
    if body.endswith(";"):
        body = body[:-1]
    if not body.strip():
        raise StorageError("refused: the query is empty")
    if ";" in body:
        raise StorageError(f"{REFUSED}; send one statement at a time")
    words = [w.upper() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_$]*", body)]
    first = words[0] if words else ""
    if first == "PRAGMA" and dialect == "sqlite":
        _check_pragma(body)
    elif first not in _FIRST_WORDS:
        raise StorageError(REFUSED)
    if _WRITE_WORDS.intersection(words):
        raise StorageError(REFUSED)
    return sql[: len(body)]  # without the trailing `;` and whatever followed it


def _check_pragma(body: str) -> None:
    m = re.fullmatch(r"\s*PRAGMA\s+(?:\w+\s*\.\s*)?(\w+)\s*(\(\s*[\w.\x00]*\s*\))?\s*", body, re.IGNORECASE)
    if m is None or "=" in body:
        raise StorageError(REFUSED)
    name, arg = m.group(1).lower(), m.group(2)
    if name not in _READ_PRAGMAS or (arg and name not in _PRAGMAS_WITH_ARG):
        raise StorageError(REFUSED)
