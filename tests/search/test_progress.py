import io

from core.trials import EpochRecord, RunResult, TrialResult, TrialSpec
from search.progress import ConsoleProgress, format_duration
from storage.records import StudyRecord

STUDY = StudyRecord("s", "digits-denoise", ["hourglass"], "psnr", "maximize", 100_000)
SPEC = TrialSpec("s", 0, "hourglass", {"d_z": 100, "d_h": 8, "L": 2, "lr": 0.001}, "digits-denoise", (1, 2))


def result(status="complete"):
    runs = [RunResult(s, "complete", {"psnr": 20.0 + s, "val_psnr": 19.0 + s}, 3, [], 1.0) for s in (1, 2)]
    return TrialResult(0, status, runs if status == "complete" else [], 2.5, "cpu", error="non-finite loss at epoch 1 step 3" if status != "complete" else None)


def test_log_mode_prints_one_line_per_trial_with_eta():
    out = io.StringIO()
    p = ConsoleProgress(out, live=False)
    p.start(STUDY, total=3, done=1, retries=1)
    p.trial_started(SPEC, 1234, None)
    p.epoch(SPEC, 0, EpochRecord(1, 0.1, {"psnr": 18.0}, 1.0))
    p.trial_finished(SPEC, 1234, result(), 2)
    p.trial_finished(SPEC, 1234, result("diverged"), 3)
    lines = out.getvalue().splitlines()
    assert "resuming with 1/3 finished" in lines[0] and "1 interrupted or failed" in lines[0]
    assert lines[1].startswith("[2/3] #0 hourglass d_z=100 d_h=8 L=2 lr=0.001 | 1.23K params | psnr 21.500±0.707 (val 20.500)")
    assert "ETA" in lines[1] and "\r" not in out.getvalue()
    assert lines[2].startswith("[3/3] #0") and "DIVERGED: non-finite loss" in lines[2]


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
