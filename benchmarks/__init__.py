"""The benchmark scripts: each module measures one thing (a search's efficiency against its
peers, the trainer's throughput, the orchestration's overhead, the verdicts' calibration, ...),
and docs/benchmarks.md holds what they found.

Run a script as a module from the repository's root, so that the project's packages and
this one import without any path set up::

    python -m benchmarks.NAME [ARGS]

e.g. ``OMP_NUM_THREADS=1 python -m benchmarks.search_efficiency --help``. Scripts import their
siblings as ``benchmarks.NAME`` (``from benchmarks.bench_util import fail``), as the tests do;
importing a module runs nothing: each script runs under its ``if __name__ == "__main__":``.
"""
