"""MkDocs hook: the command reference page (reference/cli.md), generated from `search`'s
parser at every build (search/cli/reference.py), so it cannot drift from the code."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File, Files


def on_files(files: Files, config) -> Files:
    sys.path.insert(0, str(Path(config.config_file_path).resolve().parent))  # this checkout's code, not another's
    from search.cli.reference import cli_reference

    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    return files
