"""How good the fronts a search finds are: against the reference front, the peers (Optuna, Ax, Tune),
known truth, random draws; the pruner's false stops (benchmarks/search_quality/README.md)."""
