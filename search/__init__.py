"""Pareto-frontier architecture search for neural-network shapes."""
__version__ = "0.1.0"
