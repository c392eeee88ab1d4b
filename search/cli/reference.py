"""Every command and flag of `search`, as Markdown, read from the parser itself
(`build_parser`), so the documentation cannot drift from the code: the documentation site's
build writes it to reference/cli.md (docs/hooks/cli_reference.py)."""

from __future__ import annotations

import argparse
import os

from search.cli.main import build_parser


def _cell(text: str) -> str:
    """Text for one cell of a Markdown table: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:  # a positional argument
        return f"`{action.metavar or action.dest}`"
    metavar = "" if action.nargs == 0 else f" {action.metavar or action.dest.upper()}"
    return ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if text == argparse.SUPPRESS:
        return ""
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        text += f" (one of: {', '.join(map(str, action.choices))})"
    if action.default not in (None, False, argparse.SUPPRESS) and "%(default)" not in text and "default" not in text:
        text += f" (default: {action.default})"
    return _cell(text.replace("%(default)s", str(action.default)).replace("%%", "%"))


def command_reference(name: str, parser: argparse.ArgumentParser) -> str:
    """One command's section: its usage, description and a table of its arguments by group."""
    out = [f"## search {name}", "", "```text", parser.format_usage().strip().replace("usage: ", ""), "```", ""]
    if parser.description:
        out += [parser.description.strip(), ""]
    for group in parser._action_groups:
        actions = [
            a for a in group._group_actions if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS
        ]
        if not actions:
            continue
        title = group.title or "arguments"
        out += [f"**{title[0].upper()}{title[1:]}**", "", "| argument | what it does |", "|---|---|"]
        out += [f"| {_flags(a)} | {_help(a)} |" for a in actions]
        out.append("")
    return "\n".join(out)


USAGE_COLUMNS = 80  # the usage lines' width, whatever the terminal that builds the site


def cli_reference() -> str:
    """The whole reference: one section per command, in the parser's order."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(USAGE_COLUMNS)  # argparse wraps usage to the terminal's width
    try:
        return _reference(build_parser())
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


RULES = """\
Every command takes `--plugin MODULE_OR_FILE` (repeatable; also `$SEARCH_PLUGINS`): your own
families and tasks, imported before it runs (see "Your own model and data").
Every command that touches the database takes `--storage URL` (any SQLAlchemy URL or a
SQLite file path; default `$SEARCH_STORAGE`, else `sqlite:///search.db` in the current
directory; PostgreSQL: `postgresql+psycopg://user:pw@host:5432/db`, the psycopg 3 driver
is a dependency). Bad input (unknown family or task, budget `80Q`, a budget below the smallest
model, a missing data directory, a malformed space file, a writing SQL statement) prints
one line starting `error:` and exits with status 2, leaving the database as it was.

**Resuming.** Re-running the same `search run` resumes the study: every finished trial is
kept exactly once (each is committed in its own transaction as it finishes) and replayed
into the sampler; a trial that was running when the process died (Ctrl-C, kill -9) is marked
`interrupted` and its configuration is run again (see Faults below). `--trials N` counts
finished trials (complete, failed or diverged; a failed trial that was retried counts once,
through its retry), so raising it continues a study. A resume searches with the flags of its
own command (the defaults where none are given), not those the study was created with, which
stay stored as they were: the line after `search run`'s `study ...` line says how it searches
(`searching with --sampler gp ... --pruner pareto`, the defaults' choices included: the
sampler, shape draw and scope depend on the families and `--trials`), and on a resume a
`note:` line names the flags the study was created otherwise with.
"""  # what every command shares, said once after the summary table


def _reference(parser: argparse.ArgumentParser) -> str:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {c.dest: c.help for c in sub._choices_actions}
    head = [
        "# Command reference",
        "",
        "Every `search` command and flag, generated from the command's own parser when this site is built "
        "(`search/cli/reference.py`): what `search COMMAND --help` prints, as tables. Every command also takes "
        "`--plugin MODULE_OR_FILE` (your own families and tasks) and `-h`.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    head += [f"| [`search {n}`](#search-{n}) | {_cell(summaries.get(n) or '')} |" for n in sub.choices]
    head += ["", RULES]
    return "\n".join(head) + "\n\n" + "\n\n".join(command_reference(n, p) for n, p in sub.choices.items()) + "\n"
