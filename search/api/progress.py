"""Progress output of `search run`: one line per finished trial, and while trials run:
- on a terminal, one live line (the latest epoch) rewritten in place;
- elsewhere (a batch job, `nohup`, a CI log: stderr is not a terminal), a line when a
  trial starts and an epoch line per running trial at most every `epoch_interval`
  seconds (default a minute), so that a long trial is never silent for long.
Trials on Ray workers report their epochs through the driver, so both modes show them.
Everything goes to stderr so stdout stays clean for results."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from core.budget import format_count
from core.trials import EpochRecord, TrialResult, TrialSpec
from search.engine.sampling import Rejection
from search.engine.sampling.drawn import PAIRED
from search.engine.search_flags import changed_flags, format_flags, search_flags
from search.engine.seed_checks import checked_trial
from storage.records import StudyRecord


def format_config(config: dict[str, Any]) -> str:
    return " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in config.items())


def time_outside(wall_s: float, trained_s: float, at_once: int = 1) -> str:
    """ "12.3 s, 31% of it outside the trials": a search's wall time and the share spent on
    anything but its trials' own training and evaluation (proposing, counting, storage,
    pages). With `at_once` trials side by side, their summed time counts 1/at_once of it
    on the wall (trials in parallel can leave none)."""
    share = max(0.0, wall_s - trained_s / max(1, at_once)) / wall_s if wall_s > 0 else 0.0
    return f"{wall_s:.1f} s, {share:.0%} of it outside the trials"


def drawn_clause(drawn: dict[str, int]) -> str:
    """ ", the GP proposed 31, TPE 5": which Optuna samplers drew a search's proposals, where
    more than one did (`--sampler auto` hands cheap trials to TPE; `gp` hands a long study
    over to it) or the GP proposed some two from one fit (", the GP proposed 30 (12 of them
    two from one fit)"); "" otherwise."""
    drawn = dict(drawn)
    paired = drawn.pop(PAIRED, 0)
    if paired:
        drawn["the GP"] = drawn.get("the GP", 0) + paired
    if len(drawn) < 2 and not paired:
        return ""
    said = {name: f"{n}" for name, n in drawn.items()}
    if paired:
        said["the GP"] += f" ({2 * paired} of them two from one fit)"
    first, *rest = sorted(drawn.items(), key=lambda kv: (-kv[1], kv[0]))
    return f", {first[0]} proposed {said[first[0]]}" + "".join(f", {name} {said[name]}" for name, _ in rest)


def format_duration(s: float) -> str:
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


EPOCH_INTERVAL_S = 60.0  # the least time between two epoch lines of one trial in a log


class ConsoleProgress:
    def __init__(
        self,
        stream: TextIO | None = None,
        live: bool | None = None,
        epoch_interval: float = EPOCH_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        search: Mapping[str, Any] | None = None,
        at_once: str | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        self.search = search  # the running search's settings (search_flags.search_settings), said at the start
        self.at_once = at_once  # how trials run ("2 trial(s) at once in worker processes, ..."), said at the start
        self.live = self.stream.isatty() if live is None else live
        self.epoch_interval = epoch_interval
        self.clock = clock
        self._last_line: dict[int | None, float] = {}  # trial number -> when its last line was printed
        self.metric = "metric"
        self.unit = "params"  # what sizes count: "omega" in a study budgeted so (--budget-of)
        self.total = self.done = self.ran = 0
        self.t0 = time.monotonic()
        self._live_shown = False
        self._retries: set[int] = set()
        self._checks: set[int] = set()  # seed checks (search/engine/seed_checks.py): not among the trials counted
        self.trained_s = 0.0  # the finished trials' own durations (training, evaluation), summed

    def _print(self, line: str) -> None:
        self._clear_live()
        print(line, file=self.stream, flush=True)

    def _clear_live(self) -> None:
        if self._live_shown:
            self.stream.write("\r\033[K")
            self._live_shown = False

    def start(self, study: StudyRecord, total: int, done: int, retries: int) -> None:
        self.metric, self.total, self.done = study.metric, total, done
        measure = (study.settings or {}).get("budget_of", "params")
        self.unit = "params" if measure == "params" else measure
        self.t0 = time.monotonic()
        what = (
            f"study {study.name!r}: task {study.task}, {', '.join(study.families)}, budget "
            f"{format_count(study.budget)}" + ("" if self.unit == "params" else f" {self.unit}")
        )
        if done:
            what += f"; resuming with {done}/{total} finished"
        if retries:
            what += f", {retries} interrupted or failed trial(s) to run again"
        if self.at_once:
            what += f"; {self.at_once}"
        self._print(what)
        if self.search is not None:
            self._print_search(study, len(study.families))
        if done >= total:
            self._print(f"nothing to do: {done} trials finished (raise --trials to run more)")

    def _print_search(self, study: StudyRecord, families: int) -> None:
        """The flags the study searches with; on a resume, those it was created otherwise with."""
        self._print(f"searching with {format_flags(search_flags(self.search, families))}")
        changed = changed_flags(study.settings or {}, self.search, families)
        if changed:
            self._print(
                f"note: the study was created with {format_flags(changed)}; this run searches as above "
                "(its finished trials are kept, and told to the sampler)"
            )

    def trial_started(self, spec: TrialSpec, params: int, note: str | None) -> None:
        if note and note.startswith("retry "):
            self._retries.add(spec.number)
        if checked_trial(note) is not None:
            self._checks.add(spec.number)
        line = (
            f"{self._counter(spec, 1)} #{spec.number} {spec.family} {format_config(spec.config)} "
            f"({format_count(params)} {self.unit})"
        )
        if self.live:
            self._show_live(line + " ...")
        else:
            self._print(line + " started" + (f" ({note})" if note else ""))
            self._last_line[spec.number] = self.clock()

    def epoch(self, spec: TrialSpec, repeat: int, record: EpochRecord) -> None:
        if not self.live:
            now = self.clock()
            if now - self._last_line.setdefault(spec.number, now) < self.epoch_interval:
                return
            self._last_line[spec.number] = now
        val = record.metrics.get(self.metric, math.nan)
        seed = f" seed {repeat + 1}/{len(spec.seeds)}" if len(spec.seeds) > 1 else ""
        line = (
            f"{self._counter(spec, 1)} #{spec.number} {spec.family}{seed} epoch {record.epoch}: "
            f"loss {record.train_loss:.4g}, val {self.metric} {val:.4g}  {format_duration(record.elapsed_s)}"
        )
        if self.live:
            self._show_live(line)
        else:
            self._print("  " + line)

    def _show_live(self, line: str) -> None:
        self._clear_live()
        self.stream.write(line)
        self.stream.flush()
        self._live_shown = True

    def trial_finished(self, spec: TrialSpec, params: int, result: TrialResult, finished: int) -> None:
        """`finished`: the study's finished trials now (all processes; retries pending excluded)."""
        self.done = finished
        self.ran += 1
        self.trained_s += result.duration_s
        self._last_line.pop(spec.number, None)
        elapsed = time.monotonic() - self.t0
        eta = elapsed / self.ran * max(0, self.total - self.done)
        agg = result.aggregate()
        if result.status == "complete" and self.metric in agg:
            mean, std, _ = agg[self.metric]
            val = agg.get(f"val_{self.metric}", (math.nan,))[0]
            score = f"{self.metric} {mean:.3f}" + (f"±{std:.3f}" if std is not None else "") + f" (val {val:.3f})"
        else:
            score = f"{result.status.upper()}: {result.error or ''}".strip()
        retry = " (retry)" if (spec.number is not None and self._is_retry(spec)) else ""
        self._print(
            f"{self._counter(spec, 0)}{retry} #{spec.number} {spec.family} {format_config(spec.config)} | "
            f"{format_count(params)} {self.unit} | {score} | {result.duration_s:.1f}s | "
            + (f"peak GPU {result.peak_gpu_mib:,.0f} MiB | " if result.peak_gpu_mib is not None else "")
            + f"elapsed {format_duration(elapsed)}, ETA {format_duration(eta)}"
        )

    def _counter(self, spec: TrialSpec, ahead: int) -> str:
        """ "[7/40]" (the trial's place among the search's trials), or "[seed check]"."""
        if spec.number in self._checks:
            return "[seed check]"
        return f"[{self.done + ahead}/{self.total}]"

    def _is_retry(self, spec: TrialSpec) -> bool:
        return spec.number in self._retries

    def rejected(self, rejection: Rejection) -> None:
        self._print(f"  rejected {rejection.family} {format_config(rejection.config)}: {rejection.reason}")

    def close(self) -> None:
        self._clear_live()
