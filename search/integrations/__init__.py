"""What reads a finished study for other tools: the Optuna export (optuna_export.py) and
the pruner replayed on stored curves (pruner_replay.py)."""
