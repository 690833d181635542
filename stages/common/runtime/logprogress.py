"""Progress bars readable in a log file.

A tqdm bar redraws its line with a carriage return ten times a second. On a terminal that is a
bar; written to a file or a pipe (the Prefect flow's log, ``dvc repro > log``, CI) it becomes one
line of thousands of ``\\r``-joined states. When a stage's stderr is not a terminal, the stage
wrapper puts :class:`LogLines` in front of it: each redraw is kept, not written, and the latest
one goes out as a line of its own once ``every`` seconds have passed since the last (so a bar
that moves shows up at least that often), and when the bar ends. Everything else passes through
unchanged.

A bar that stops moving (one slow step: a corpus that takes 25 s to draw, the last tasks of a
pool) would leave the log silent, since tqdm redraws only when it advances. So a watcher thread
writes the bar's last state again once ``stalled`` seconds have gone by with nothing written,
marked with how long the bar has not moved (``... (no step for 12 s)``): the log then shows at
least every ``stalled`` seconds where the stage stands. A stage with no bar on screen gets no
such line; it prints its own progress. Nothing here is a DVC dep (the runtime is not): it changes
how progress reads, never what a stage computes.
"""
from __future__ import annotations

import io
import os
import threading
import time
import weakref
from typing import Callable, TextIO


class LogLines(io.TextIOBase):
    """A text stream over ``out`` that turns carriage-return redraws into time-spaced lines."""

    def __init__(self, out: TextIO, every: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 stalled: float | None = 10.0):
        if stalled is not None and stalled <= 0:
            raise ValueError(f"LogLines: stalled must be > 0 seconds or None, got {stalled}")
        self.out, self.every, self.clock, self.stalled = out, every, clock, stalled
        self.pending = ""            # the latest redraw not written yet
        self.last = clock()          # when the last redraw went out (the stage's start, at first)
        self.moved = self.last       # when the bar last drew a new state
        self.wrote = self.last       # when anything last went out
        self.shown = ""              # the last redraw written
        self._lock = threading.RLock()
        me = weakref.ref(self)                      # neither hook keeps the stream alive
        os.register_at_fork(after_in_child=lambda: (log := me()) is not None and log._forked())
        if stalled is not None:
            _start_watcher(self)

    def _forked(self) -> None:
        """A forked child (a worker pool) gets a fresh lock: the watcher may have held the parent's
        at the fork, and the watcher thread itself does not survive the fork."""
        self._lock = threading.RLock()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.out.fileno()

    def write(self, text: str) -> int:
        with self._lock:
            return self._write(text)

    def _write(self, text: str) -> int:
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
            self.wrote = self.clock()

    def _redraw(self) -> None:
        if self._in_redraw and not self._judged:      # a writer that does not flush: judge it here
            self._judge()
        self._in_redraw, self._judged = True, False
        self.pending = ""
        self.moved = self.clock()

    def _judge(self) -> None:
        """Write the pending redraw if ``every`` seconds have passed since the last one went out."""
        state = self.pending.strip()
        if state and self.clock() - self.last >= self.every:
            self._show(state)

    def _show(self, state: str) -> None:
        self.out.write(state + "\n")
        self.out.flush()
        self.last = self.wrote = self.clock()
        self.shown = state

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
        with self._lock:
            if self._in_redraw and self.pending.strip():    # a redraw arrived complete: judge it now
                self._judge()
                self._judged = True
            self.out.flush()

    def beat(self) -> bool:
        """Write the bar's last state again if a complete one is on screen and nothing has gone
        out for ``stalled`` seconds; True when it wrote. The watcher thread calls this."""
        with self._lock:
            state = self.pending.strip()
            now = self.clock()
            if not (self.stalled and self._in_redraw and self._judged and state) or now - self.wrote < self.stalled:
                return False
            self.out.write(f"{state}  (no step for {now - self.moved:.0f} s)\n")
            self.out.flush()
            self.last = self.wrote = now
            return True


def _start_watcher(log: LogLines) -> None:
    """A daemon thread that calls ``log.beat()`` every second while ``log`` lives."""
    ref = weakref.ref(log)
    period = min(1.0, log.stalled / 4)

    def watch() -> None:
        while True:
            time.sleep(period)
            target = ref()
            if target is None:
                return
            try:
                target.beat()
            except (OSError, ValueError):       # the stream underneath was closed: stop watching
                return
            del target

    threading.Thread(target=watch, name="logprogress-watcher", daemon=True).start()
