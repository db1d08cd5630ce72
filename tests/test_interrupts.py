"""Stop signals held by `whole()` are never lost: one handled while the handlers are being put back
is still raised once the block is done (a Ctrl-C was once lost so under load)."""

from __future__ import annotations

import signal

import pytest

from ndcg_report import interrupts
from ndcg_report.interrupts import Interrupted, whole


def _a_signal_handled_as_the_handlers_go_back(monkeypatch, when: str) -> None:
    """signal.signal as the interrupts module calls it, but SIGINT arrives (its current Python handler
    runs) just before (`before`) or just after (`after`) SIGINT's handler is put back."""
    real = signal.signal
    pending = [signal.SIGINT]  # one signal, handled once

    def signal_with_one_arriving(signum, handler):
        if signum == signal.SIGINT and when == "before" and pending:
            signal.getsignal(signal.SIGINT)(pending.pop(), None)
        previous = real(signum, handler)
        if signum == signal.SIGINT and when == "after" and pending:
            signal.getsignal(signal.SIGINT)(pending.pop(), None)
        return previous

    monkeypatch.setattr(interrupts.signal, "signal", signal_with_one_arriving)


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_stop_handled_while_whole_puts_the_handlers_back_is_raised(stop_signals, monkeypatch, when):
    with pytest.raises(Interrupted) as stopped:
        with whole():
            _a_signal_handled_as_the_handlers_go_back(monkeypatch, when)
    assert stopped.value.signum == signal.SIGINT
    monkeypatch.undo()
    for signum in interrupts.STOP_SIGNALS:  # every handler is back, whatever was raised meanwhile
        assert signal.getsignal(signum) is interrupts.raise_interrupted


def test_a_stop_held_by_whole_is_raised_after_the_block_and_the_first_stop_wins(stop_signals):
    with pytest.raises(Interrupted) as stopped:
        with whole():
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGHUP)
            done = True
    assert done and stopped.value.signum == signal.SIGTERM
    with pytest.raises(Interrupted) as first:
        with whole():
            signal.raise_signal(signal.SIGHUP)
            raise Interrupted(signal.SIGINT)  # a stop already on its way wins
    assert first.value.signum == signal.SIGINT
