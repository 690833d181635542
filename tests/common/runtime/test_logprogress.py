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
