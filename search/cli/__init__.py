"""The front door: the `search` command (main.py, the parser) and its sub-commands, one
module per kind of job: run.py (`search run`), browse.py (report, serve, studies, trials,
sql), catalog.py (params, spaces, tasks, recipes), compare.py, export.py; common.py holds what several
commands share. The work itself is
search/api/'s (the Python API): the CLI parses flags and prints."""

from search.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
