"""The benchmark scripts: each module measures one thing (a search's efficiency against its
peers, the trainer's throughput, the orchestration's overhead, the verdicts' calibration, ...),
and docs/benchmarks.md holds what they found.

The scripts sit in one folder per question they answer (benchmarks/README.md lists them):
``search_quality`` (how good a search's fronts are), ``speed`` (wall time, throughput,
overhead), ``verdicts`` (verdicts and predictions), ``reliability`` (faults, restarts, a
lost node), ``gpu`` (what a lent GPU measures) and ``reproductions`` (the papers' claims);
``bench_util`` (the scripts' shared helpers) and the two general tools ``trials_to_study``
and ``front_png`` stay at this top level.

Run a script as a module from the repository's root, so that the project's packages and
this one import without any path set up::

    python -m benchmarks.GROUP.NAME [ARGS]

e.g. ``OMP_NUM_THREADS=1 python -m benchmarks.search_quality.search_efficiency --help``.
Scripts import each other by their full name (``from benchmarks.bench_util import fail``,
``from benchmarks.verdicts.verdict_calibration import SETTINGS``), as the tests do;
importing a module runs nothing: each script runs under its ``if __name__ == "__main__":``.
"""
