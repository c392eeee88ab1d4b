import io

from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from search.api.progress import ConsoleProgress, format_duration
from storage.records import StudyRecord

STUDY = StudyRecord("s", "digits-denoise", ["hourglass"], "psnr", "maximize", 100_000)
SPEC = TrialSpec("s", 0, "hourglass", {"d_z": 100, "d_h": 8, "L": 2, "lr": 0.001}, "digits-denoise", (1, 2))


def result(status="complete"):
    runs = [RunResult(s, "complete", {"psnr": 20.0 + s, "val_psnr": 19.0 + s}, 3, [], 1.0) for s in (1, 2)]
    return TrialResult(
        0,
        status,
        runs if status == "complete" else [],
        2.5,
        "cpu",
        error="non-finite loss at epoch 1 step 3" if status != "complete" else None,
    )


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_log_mode_prints_a_start_line_and_one_line_per_finished_trial_with_eta():
    out = io.StringIO()
    p = ConsoleProgress(out, live=False)
    p.start(STUDY, total=3, done=1, retries=1)
    p.trial_started(SPEC, 1234, None)
    p.epoch(SPEC, 0, EpochRecord(1, 0.1, {"psnr": 18.0}, 1.0))  # within the first minute: not shown
    p.trial_finished(SPEC, 1234, result(), 2)
    p.trial_finished(SPEC, 1234, result("diverged"), 3)
    lines = out.getvalue().splitlines()
    assert "resuming with 1/3 finished" in lines[0] and "1 interrupted or failed" in lines[0]
    assert lines[1] == "[2/3] #0 hourglass d_z=100 d_h=8 L=2 lr=0.001 (1.23K params) started"
    assert lines[2].startswith(
        "[2/3] #0 hourglass d_z=100 d_h=8 L=2 lr=0.001 | 1.23K params | psnr 21.500±0.707 (val 20.500)"
    )
    assert "ETA" in lines[2] and "\r" not in out.getvalue()
    assert lines[3].startswith("[3/3] #0") and "DIVERGED: non-finite loss" in lines[3]
    assert len(lines) == 4


def test_log_mode_prints_an_epoch_line_per_trial_at_most_once_a_minute():
    """A log (stderr not a terminal) is never silent for long: each running trial (two at
    once here, as on Ray workers) gets an epoch line once a minute has passed since its
    start or its last line, and no more often."""
    out, clock = io.StringIO(), Clock()
    p = ConsoleProgress(out, live=False, clock=clock)
    p.start(STUDY, total=2, done=0, retries=0)
    other = TrialSpec("s", 1, "hourglass", {"d_z": 50}, "digits-denoise", (1,))
    p.trial_started(SPEC, 1234, None)
    clock.now = 30.0
    p.trial_started(other, 99, "retry of #7")
    for t, spec, epoch in (
        (59.0, SPEC, 1),
        (60.0, SPEC, 2),
        (61.0, SPEC, 3),
        (89.0, other, 1),
        (90.0, other, 2),
        (119.0, SPEC, 4),
        (120.0, SPEC, 5),
    ):
        clock.now = t
        p.epoch(spec, 0, EpochRecord(epoch, 0.5, {"psnr": 17.0 + epoch}, t))
    epochs = [line for line in out.getvalue().splitlines() if "epoch" in line]
    assert epochs == [
        "  [1/2] #0 hourglass seed 1/2 epoch 2: loss 0.5, val psnr 19  1:00",
        "  [1/2] #1 hourglass epoch 2: loss 0.5, val psnr 19  1:30",
        "  [1/2] #0 hourglass seed 1/2 epoch 5: loss 0.5, val psnr 22  2:00",
    ]
    assert "#1 hourglass d_z=50 (99 params) started (retry of #7)" in out.getvalue()


def test_live_mode_shows_epochs_in_place():
    out = io.StringIO()
    p = ConsoleProgress(out, live=True)
    p.start(STUDY, total=1, done=0, retries=0)
    p.epoch(SPEC, 1, EpochRecord(4, 0.1, {"psnr": 18.25}, 61.0))
    assert "seed 2/2 epoch 4: loss 0.1, val psnr 18.25  1:01" in out.getvalue()
    p.trial_finished(SPEC, 1234, result(), 1)
    assert "\r\033[K[1/1] #0" in out.getvalue()


def test_durations():
    assert format_duration(59.6) == "1:00" and format_duration(3725) == "1:02:05"


def test_the_start_says_how_the_study_searches_and_what_a_resume_changed():
    from dataclasses import replace

    running = {
        "sampler": "gp",
        "scope": "family",
        "share": "equal",
        "spread": "size",
        "size_scale": "log",
        "shape_draw": "modelled",
        "corners": "both",
        "start": "spread",
        "revisit": "answer",
        "pruner": "pareto",
        "prune_grace": None,
    }
    out = io.StringIO()
    ConsoleProgress(out, live=False, search=running).start(replace(STUDY, settings=dict(running)), 3, 0, 0)
    lines = out.getvalue().splitlines()
    assert lines[1] == (
        "searching with --sampler gp --spread size --size-scale log --shape-draw modelled "
        "--corners both --start spread --revisit answer --pruner pareto"
    )  # one family: no share
    assert len(lines) == 2  # created as it runs: no note
    out = io.StringIO()
    created = dict(running, pruner="none", shape_draw="random")
    ConsoleProgress(out, live=False, search=running).start(replace(STUDY, settings=created), 3, 1, 0)
    assert out.getvalue().splitlines()[2] == (
        "note: the study was created with --shape-draw random --pruner none; "
        "this run searches as above (its finished trials are kept, and told "
        "to the sampler)"
    )
    out = io.StringIO()
    ConsoleProgress(out, live=False).start(STUDY, 3, 0, 0)  # no search given (a retrain): the study line only
    assert len(out.getvalue().splitlines()) == 1


def test_the_share_outside_the_trials():
    from search.api.progress import time_outside

    assert time_outside(10.0, 7.5) == "10.0 s, 25% of it outside the trials"
    assert time_outside(10.0, 14.0) == "10.0 s, 0% of it outside the trials"  # trials in parallel
    assert time_outside(0.0, 0.0) == "0.0 s, 0% of it outside the trials"


def test_the_summary_says_which_samplers_proposed_where_several_did():
    from search.api.progress import drawn_clause

    assert drawn_clause({}) == "" and drawn_clause({"the GP": 40}) == ""
    assert drawn_clause({"TPE": 5, "the GP": 31}) == ", the GP proposed 31, TPE 5"
