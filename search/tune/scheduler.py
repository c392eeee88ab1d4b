"""The study's pruner as a Ray Tune `TrialScheduler`.

`ParetoScheduler(searcher)` runs trials first in, first out (Tune's `FIFOScheduler`) and
hands every epoch a trial reports to the study (`StudySearcher.on_epoch`): the progress
shows it and the study's pruner (search/engine/pruners.py, `--pruner pareto`: a finished
trial of the same family with no more parameters was clearly better at that epoch)
judges it on the first seed. When the pruner says stop, the scheduler answers
`TrialScheduler.STOP`: Tune stops the trial at once (a function trainable waits in
`tune.report` until Tune has taken its result, so it trains no further epoch) and the
searcher stores it `pruned` with the epochs it reported, as the local executor does.

Tune's own schedulers (ASHA, PBT, ...) compare one metric across trials and know no
parameter budget; this one applies the product's rule, which judges a trial only against
smaller trials of its own family.
"""

from __future__ import annotations

from typing import Any

from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from search.tune.searcher import StudySearcher, error_message
from search.tune.trainable import is_final


class ParetoScheduler(FIFOScheduler):
    def __init__(self, searcher: StudySearcher) -> None:
        super().__init__()
        self.searcher = searcher

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict[str, Any]) -> str:
        if is_final(result) or "epoch" not in result:
            return TrialScheduler.CONTINUE
        reason = self.searcher.on_epoch(trial.trial_id, result)
        return TrialScheduler.STOP if reason is not None else TrialScheduler.CONTINUE

    def on_trial_error(self, tune_controller: Any, trial: Any) -> None:
        message = error_message(trial)
        if message:
            self.searcher.note_error(trial.trial_id, message)
        super().on_trial_error(tune_controller, trial)

    def debug_string(self) -> str:
        return "the study's Pareto pruner (search/engine/pruners.py)"
