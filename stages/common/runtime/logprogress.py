"""Progress bars readable in a log file.

A tqdm bar redraws its line with a carriage return ten times a second. On a terminal that is a
bar; written to a file or a pipe (the Prefect flow's log, ``dvc repro > log``, CI) it becomes one
line of thousands of ``\\r``-joined states. When a stage's stderr is not a terminal, the stage
wrapper puts :class:`LogLines` in front of it: each redraw is kept, not written, and the latest
one goes out as a line of its own once ``every`` seconds have passed since the last (so a bar
that moves shows up at least that often), and when the bar ends. Everything else passes through
unchanged. Nothing here is a DVC dep (the runtime is not): it changes how progress reads, never
what a stage computes.
"""
from __future__ import annotations

import io
import time
from typing import Callable, TextIO


class LogLines(io.TextIOBase):
    """A text stream over ``out`` that turns carriage-return redraws into time-spaced lines."""

    def __init__(self, out: TextIO, every: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.out, self.every, self.clock = out, every, clock
        self.pending = ""            # the latest redraw not written yet
        self.last = clock()          # when the last redraw went out (the stage's start, at first)
        self.shown = ""              # the last redraw written

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.out.fileno()

    def write(self, text: str) -> int:
        rest = text
        while rest:
            cr, nl = rest.find("\r"), rest.find("\n")
            if cr == -1 and nl == -1:                   # a piece of the current line
                self._piece(rest)
                break
            if nl != -1 and (cr == -1 or nl < cr):      # a line ends
                self._piece(rest[:nl])
                self._end_line()
                rest = rest[nl + 1:]
            else:                                       # a redraw starts
                self._piece(rest[:cr])
                self._redraw()
                rest = rest[cr + 1:]
        return len(text)

    # the current line is either plain text (written through) or a redraw (kept in ``pending``);
    # ``_judged``: a flush already decided whether the pending redraw goes out
    _in_redraw = False
    _judged = False

    def _piece(self, s: str) -> None:
        if not s:
            return
        if self._in_redraw:
            self.pending += s
        else:
            self.out.write(s)

    def _redraw(self) -> None:
        if self._in_redraw and not self._judged:      # a writer that does not flush: judge it here
            self._judge()
        self._in_redraw, self._judged = True, False
        self.pending = ""

    def _judge(self) -> None:
        """Write the pending redraw if ``every`` seconds have passed since the last one went out."""
        state = self.pending.strip()
        if state and self.clock() - self.last >= self.every:
            self._show(state)

    def _show(self, state: str) -> None:
        self.out.write(state + "\n")
        self.out.flush()
        self.last, self.shown = self.clock(), state

    def _end_line(self) -> None:
        if self._in_redraw:                              # the bar's last state, then its line ends
            state = self.pending.strip()
            if state and state != self.shown:
                self._show(state)
            self._in_redraw = False
            self.pending = ""
        else:
            self.out.write("\n")
        self.out.flush()

    def flush(self) -> None:
        if self._in_redraw and self.pending.strip():    # a redraw arrived complete: judge it now
            self._judge()
            self._judged = True
        self.out.flush()
