"""MkDocs hook: the generated reference pages, written at every build so they cannot drift
from the code: the command reference (reference/cli.md) from `search`'s parser
(search/cli/reference.py) and the database's tables (reference/schema.md) from the schema
(storage/schema_reference.py); and on the Python API page, `search.run`'s keywords from
the one table of run options (search/engine/run_options.py), where the page says
`<!-- search.run options -->`."""

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


RUN_OPTIONS_MARK = "<!-- search.run options -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if RUN_OPTIONS_MARK not in markdown:
        return markdown
    from search.engine.run_options import options_table

    return markdown.replace(RUN_OPTIONS_MARK, options_table())
