"""The study engine: a validated `RunSpec` (specs.py) prepared and run by the study loop
(study.py) over a store (study_store.py), with proposers (proposers.py, built by name in
samplers.py; the spread and share policies in policies.py; Optuna's draw in
optuna_draw.py), the Pareto pruner (pruners.py), retries (retries.py) and the ownership
of running trials (ownership.py). The executors that run trials are search/executors/."""
