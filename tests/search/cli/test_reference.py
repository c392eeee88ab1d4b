"""search/cli/reference.py: the documentation's command reference, read from the parser."""

from __future__ import annotations

import argparse

from search.cli.main import build_parser
from search.cli.reference import cli_reference


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_every_command_and_flag_is_in_the_reference():
    text = cli_reference()
    for name, parser in _subcommands().items():
        assert f"## search {name}\n" in text, name
        section = text[text.index(f"## search {name}\n") :]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            for flag in action.option_strings:
                assert f"`{flag}" in section, (name, flag)


def test_the_reference_does_not_depend_on_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    narrow = cli_reference()
    monkeypatch.setenv("COLUMNS", "300")
    assert cli_reference() == narrow


def test_a_flag_row_says_its_help_choices_and_default():
    text = cli_reference()
    run = text[text.index("## search run\n") : text.index("## search report\n")]
    row = next(line for line in run.splitlines() if line.startswith("| `--fuse"))
    assert "(one of: on, off)" in row and "one batched program" in row
    row = next(line for line in run.splitlines() if line.startswith("| `--storage-wait S`"))
    assert "default 300" in row and "\n" not in row
