"""A progress bar on stderr for long CLI analyses, driven by the work done: bytes of trace read and hosts finished.

It draws only on a terminal, and only once an analysis has run for `DELAY_S` (short ones stay silent); piped or
redirected output gets nothing. Each host counts twice its file size: once as its bytes are read, once when its
analysis is done, so the bar moves while a big file is read and again as hosts finish.
"""

import os
import threading
import time

DELAY_S = 1.0  # an analysis shorter than this shows no bar
REDRAW_S = 0.1
BAR_WIDTH = 24


def is_terminal(stream):
    """Whether `stream` is an interactive terminal (a progress bar would be noise in a pipe or a file)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def file_size(path):
    try:
        return os.path.getsize(path)
    except (OSError, TypeError, ValueError):
        return 0  # a URL, or a file the analysis will report as bad


class ProgressBar:
    """Progress of one run's analysis: `read(done, total)` from the model build of the host being read,
    `host_done(host_file)` as each host finishes. Safe to call from other threads; `close()` erases the bar."""

    def __init__(self, stream, host_files, label="Analyzing", clock=time.monotonic):
        self._stream = getattr(stream, "raw", stream)  # its own text only: the \r must reach the terminal
        self._clock = clock
        self._label = label
        self._sizes = {f.host: file_size(f.path) for f in host_files}
        self._total = max(1, 2 * sum(self._sizes.values()))
        self._hosts = len(host_files)
        self._finished = 0
        self._finished_bytes = 0
        self._reading = 0  # bytes read of the host being read now (in this process)
        self._started = clock()
        self._drawn_at = None
        self._width = 0
        self._lock = threading.Lock()

    def read(self, done, total):
        with self._lock:
            self._reading = min(done, total)
            self._draw()

    def host_done(self, host_file):
        with self._lock:
            self._finished += 1
            self._finished_bytes += 2 * self._sizes.get(host_file.host, 0)
            self._reading = 0
            self._draw(force=True)

    def fraction(self):
        """The share of the work done, 0 to 1: bytes read and analyzed over twice the bytes of all hosts."""
        if not any(self._sizes.values()):
            return self._finished / max(1, self._hosts)
        return min(1.0, (self._finished_bytes + self._reading) / self._total)

    def line(self):
        """`Analyzing [#########---------------]  38%  host 3/8  114/300 MB`."""
        fraction = self.fraction()
        filled = int(round(fraction * BAR_WIDTH))
        total_mb = sum(self._sizes.values()) / 1e6
        done_mb = min(total_mb, (self._finished_bytes / 2 + self._reading) / 1e6)
        hosts = f"  host {min(self._finished + 1, self._hosts)}/{self._hosts}" if self._hosts > 1 else ""
        size = f"  {done_mb:.0f}/{total_mb:.0f} MB" if total_mb >= 1 else ""
        return f"{self._label} [{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {fraction * 100:3.0f}%{hosts}{size}"

    def _draw(self, force=False):
        now = self._clock()
        if now - self._started < DELAY_S:
            return
        if not force and self._drawn_at is not None and now - self._drawn_at < REDRAW_S:
            return
        text = self.line()
        self._stream.write("\r" + text + " " * max(0, self._width - len(text)))
        self._stream.flush()
        self._width = len(text)
        self._drawn_at = now

    def close(self):
        """Erases the bar, if one was drawn, so what follows starts on a clean line."""
        with self._lock:
            if self._drawn_at is not None:
                self._stream.write("\r" + " " * self._width + "\r")
                self._stream.flush()
                self._drawn_at = None
