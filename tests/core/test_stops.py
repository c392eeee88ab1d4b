"""core/stops.py: a pruned trial's reason says where it stopped, and is read back."""

from __future__ import annotations

import pytest

from core.stops import stop_reason, stopped_at


@pytest.mark.parametrize("epoch,epochs", [(1, 1), (3, 10), (120, 500)])
def test_the_reason_is_read_back(epoch, epochs):
    reason = stop_reason(epoch, epochs, "validation 12, while a trial with 100 parameters had 19")
    assert reason.startswith(f"stopped at epoch {epoch} of {epochs}: validation 12")
    assert stopped_at(reason) == (epoch, epochs)


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "boom",
        "stopped at epoch 4: validation 12",  # before "of E"
        "stopped at epoch 0 of 5: x",
        "stopped at epoch 6 of 5: x",
        "xstopped at epoch 1 of 5: x",
    ],
)
def test_other_texts_say_nothing(text):
    assert stopped_at(text) is None
