"""How far `search compare`'s verdicts, `--decide` and `search predict` can be trusted: calibration
against replicate searches, power, interval widths (benchmarks/verdicts/README.md)."""
