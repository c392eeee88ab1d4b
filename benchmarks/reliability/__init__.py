"""Faults, restarts and lost nodes: searches killed, databases restarted, a Ray node lost, several
writers on one study; nothing lost, nothing duplicated (benchmarks/reliability/README.md)."""
