"""The `search` command's parser. Thin: each sub-command parses its flags and calls one
function of the modules beside this one (run, browse, catalog, compare, export, model, train, data).

Errors a user can fix (UserError) print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from core.errors import UserError
from search import __version__
from search.cli import browse, catalog, compare, data, export, model, predict, run, train


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="search", description="Pareto-frontier architecture search for neural-network shapes.")
    p.add_argument("--version", action="version", version=f"search {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (run.add_parser, browse.add_parsers, compare.add_parser, predict.add_parser, export.add_parser,
                model.add_parser, train.add_parser, catalog.add_parsers, data.add_parser):
        add(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: finished trials are saved; run the same command again to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0

