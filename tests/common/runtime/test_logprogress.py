"""stages/common/runtime/logprogress.py: a tqdm bar written to a log file comes out as one line
per interval (and its last state), not as one long carriage-return-joined line; other output
passes through as written."""
from __future__ import annotations

import io

from stages.common.runtime.logprogress import LogLines


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_redraws_become_lines_at_most_every_interval_and_the_last_state_ends_the_bar():
    out, clock = io.StringIO(), Clock()
    log = LogLines(out, every=5.0, clock=clock)
    for i in range(1, 21):                  # a redraw a second for 20 s
        clock.t = float(i)
        log.write(f"\rtrain: {i}/20")
        log.flush()
    log.write("\n")
    assert out.getvalue().splitlines() == ["train: 5/20", "train: 10/20", "train: 15/20", "train: 20/20"]
    assert "\r" not in out.getvalue()


def test_plain_lines_and_a_message_printed_over_a_bar_pass_through():
    out, clock = io.StringIO(), Clock()
    log = LogLines(out, every=5.0, clock=clock)
    log.write("[s-train] profile=default\n")
    log.write("\rstep 1")
    clock.t = 6.0
    log.write("\r      \r")                # tqdm.write: the bar is cleared, the message printed,
    log.write("loss 0.5\n")                # then the bar is drawn again
    log.write("\rstep 2")
    log.write("\n")
    # "step 1" was the bar's state for 6 s, so it goes out when the bar is cleared
    assert out.getvalue().splitlines() == ["[s-train] profile=default", "step 1", "loss 0.5", "step 2"]


def test_a_real_tqdm_bar_in_a_log_reads_line_by_line():
    from tqdm import tqdm

    out, clock = io.StringIO(), Clock()
    log = LogLines(out, every=5.0, clock=clock)
    for i in tqdm(range(100), file=log, mininterval=0, miniters=1, desc="epochs"):
        clock.t = i * 0.5                  # 50 s in all: a line about every 5 s
    lines = out.getvalue().splitlines()
    assert 9 <= len(lines) <= 12, lines
    assert all(line.startswith("epochs:") for line in lines) and lines[-1].startswith("epochs: 100%")
    assert "\r" not in out.getvalue()


def test_a_stage_writing_to_a_pipe_gets_the_log_lines_and_a_terminal_does_not(tmp_path, monkeypatch):
    import sys

    from stages.common.runtime import stage as stage_mod

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Tty())
    monkeypatch.setattr(stage_mod, "load_study", lambda *a: (_ for _ in ()).throw(stage_mod.ParamsError("x")))
    for stream, wrapped in ((Tty(), False), (io.StringIO(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        try:
            with stage_mod.stage("s", "train", object):
                pass
        except SystemExit:
            pass
        assert isinstance(sys.stderr, LogLines) is wrapped


def test_a_stalled_bar_is_written_again_with_how_long_it_has_not_moved():
    out, clock = io.StringIO(), Clock()
    log = LogLines(out, every=5.0, clock=clock, stalled=10.0)
    clock.t = 6.0
    log.write("\rcorpora: 0/3")
    log.flush()                               # 6 s after the start: goes out at once
    assert out.getvalue().splitlines() == ["corpora: 0/3"]
    clock.t = 15.0
    assert not log.beat()                     # 9 s of silence: not yet
    clock.t = 16.0
    assert log.beat()
    clock.t = 17.0
    assert not log.beat()                     # just written
    clock.t = 26.5
    assert log.beat()
    assert out.getvalue().splitlines() == ["corpora: 0/3", "corpora: 0/3  (no step for 10 s)",
                                           "corpora: 0/3  (no step for 20 s)"]
    clock.t = 27.0
    log.write("\rcorpora: 1/3")
    log.write("\n")
    assert out.getvalue().splitlines()[-1] == "corpora: 1/3"


def test_no_repeat_for_a_moving_bar_for_plain_text_or_when_no_bar_is_on_screen():
    out, clock = io.StringIO(), Clock()
    log = LogLines(out, every=5.0, clock=clock, stalled=10.0)
    for i in range(1, 31):                   # a bar that moves every second: a line every 5 s
        clock.t = float(i)
        log.write(f"\rtrain: {i}/30")
        log.flush()
        assert not log.beat()
    log.write("\n")
    clock.t = 45.0
    assert not log.beat()                     # the bar has ended: nothing to repeat
    log.write("\rbar: 1/9")                   # a redraw not flushed yet may be incomplete
    clock.t = 60.0
    assert not log.beat()
    log.flush()
    log.write("\r")                           # a new redraw begins: nothing complete on screen
    clock.t = 80.0
    assert not log.beat()
    assert "(no step" not in out.getvalue()


def test_the_watcher_thread_repeats_a_stalled_bar_in_real_time():
    import time

    out = io.StringIO()
    log = LogLines(out, every=0.0, stalled=0.2)
    log.write("\rslow: 1/4")
    log.flush()
    deadline = time.monotonic() + 5
    while "(no step for" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "slow: 1/4  (no step for" in out.getvalue()


def test_stalled_must_be_positive():
    import pytest

    with pytest.raises(ValueError, match="stalled must be > 0 seconds or None, got 0"):
        LogLines(io.StringIO(), stalled=0)


def test_a_forked_child_can_write_while_the_parent_holds_the_lock():
    import os
    import time

    r, w = os.pipe()
    log = LogLines(os.fdopen(w, "w"), stalled=None)
    with log._lock:                           # as the watcher might at the moment of a fork
        pid = os.fork()
        if pid == 0:                          # the child: would block forever on the parent's lock
            try:
                log.write("from the child\n")
                log.flush()
            finally:
                os._exit(0)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError("the forked child blocked on the lock it inherited")
    log.out.close()
    assert os.read(r, 100) == b"from the child\n"
    os.close(r)
