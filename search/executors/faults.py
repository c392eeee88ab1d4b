"""Fault injection for tests and fault campaigns. Inactive unless SEARCH_FAULT is set.

SEARCH_FAULT="KIND:KEY=VALUE[,KIND:KEY=VALUE...]" makes the process that runs a trial whose
config has KEY=VALUE misbehave for real, before training starts:
    crash  the process exits at once (os._exit(137)), as if killed with kill -9
    hang   the process sleeps (a hung worker)
    sleepN the process sleeps N seconds, then trains (a slow start), e.g. sleep4:d_h=7
    raise  the trial raises RuntimeError (an ordinary bug)
Executors call `inject(spec)` just before running a trial, in the process that runs it
(the driver for --executor local, a Ray worker for --executor ray).

A kill in the middle of writing a trial's weights is SEARCH_FAULT_WEIGHTS=crash
(search/artifacts/weights.py: half the file is written, then the process exits).
"""

from __future__ import annotations

import os
import time

from core.trials import TrialSpec

ENV = "SEARCH_FAULT"


def _rules(text: str) -> list[tuple[str, str, str]]:
    rules = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, cond = part.partition(":")
        key, _, value = cond.partition("=")
        rules.append((kind, key, value))
    return rules


def inject(spec: TrialSpec) -> None:
    text = os.environ.get(ENV)
    if not text:
        return
    for kind, key, value in _rules(text):
        if key in spec.config and str(spec.config[key]).lower() == value.lower():
            if kind == "crash":
                os._exit(137)
            if kind == "hang":
                time.sleep(10**6)
            if kind.startswith("sleep") and kind[5:].replace(".", "", 1).isdigit():
                time.sleep(float(kind[5:]))
            if kind == "raise":
                raise RuntimeError(f"injected fault for {key}={value}")
