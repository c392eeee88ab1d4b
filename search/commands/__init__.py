"""The sub-commands of `search`, one module per kind of job (the parser is search/cli.py)."""
from search.commands.browse import (
    cmd_report,
    cmd_serve,
    cmd_sql,
    cmd_studies,
    cmd_trials,
)
from search.commands.catalog import cmd_params, cmd_recipes, cmd_spaces, cmd_tasks
from search.commands.compare import cmd_compare
from search.commands.export import cmd_export_optuna
from search.commands.run import cmd_run

__all__ = ["cmd_compare", "cmd_export_optuna", "cmd_params", "cmd_recipes", "cmd_report", "cmd_run", "cmd_serve", "cmd_spaces", "cmd_sql", "cmd_studies", "cmd_tasks", "cmd_trials"]
