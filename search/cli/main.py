"""The `search` command's parser. Thin: each sub-command parses its flags and calls one
function of the modules beside this one (run, browse, catalog, compare, predict, optuna_export, model, train,
data).

Errors a user can fix (UserError) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from core.errors import UserError
from search import __version__
from search.cli import browse, catalog, compare, data, model, optuna_export, predict, run, train


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    """The `search` command's parser: one sub-command per kind of work (run, compare, ...)."""
    p = _Parser(prog="search", description="Pareto-frontier architecture search for neural-network shapes.")
    p.add_argument("--version", action="version", version=f"search {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (
        run.add_parser,
        browse.add_parsers,
        compare.add_parser,
        predict.add_parser,
        optuna_export.add_parser,
        model.add_parser,
        train.add_parser,
        catalog.add_parsers,
        data.add_parser,
    ):
        add(sub)
    for command in sub.choices.values():
        command.add_argument(
            "--plugin",
            action="append",
            metavar="MODULE_OR_FILE",
            help="import a module or .py file that registers your own families and tasks "
            "before the command runs (repeatable; also $SEARCH_PLUGINS, a ':' list)",
        )
    return p


# Commands that read the family and task registries: they load every plugin (entry points,
# $SEARCH_PLUGINS, --plugin); the others only what --plugin or $SEARCH_PLUGINS name.
REGISTRY_COMMANDS = ("run", "params", "spaces", "tasks", "model", "train", "predict", "data")


def load_plugins(args: argparse.Namespace) -> None:
    """The plugins a command needs, loaded before it runs (never for --help)."""
    import os

    from search.plugins import ENV

    if args.command in REGISTRY_COMMANDS or getattr(args, "plugin", None) or os.environ.get(ENV):
        from search.plugins import load_plugins as load

        load(getattr(args, "plugin", None) or ())


def main(argv: Sequence[str] | None = None) -> int:
    """The `search` command: parse `argv`, load the plugins it names, run the sub-command;
    a UserError is one `error:` line and exit status 2."""
    try:
        args = build_parser().parse_args(argv)
        load_plugins(args)
        return args.func(args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: finished trials are saved; run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
