"""The study engine: a validated `RunSpec` (specs.py) prepared and run by the study loop
(study.py) over a store (study_store.py), with its sampler (sampling/: the samplers by name,
the search's settings and rules, Optuna's draw), the Pareto pruner (pruners.py), retries
(retries.py) and the ownership of running trials (ownership.py). The executors that run
trials are search/executors/."""
