"""MkDocs hook: the generated reference pages, written at every build so they cannot drift
from the code: the command reference (reference/cli.md) from `search`'s parser
(search/cli/reference.py) and the database's tables (reference/schema.md) from the schema
(storage/schema_reference.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File, Files


def on_files(files: Files, config) -> Files:
    sys.path.insert(0, str(Path(config.config_file_path).resolve().parent))  # this checkout's code, not another's
    from search.cli.reference import cli_reference
    from storage.schema_reference import schema_reference

    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    files.append(File.generated(config, "reference/schema.md", content=schema_reference()))
    return files
