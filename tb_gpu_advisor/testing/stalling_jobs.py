"""Worker jobs that misbehave on purpose, by file name, for the tests and the benchmark of the server's isolation:
`*stall*` holds the GIL in a backtracking regex for ever, `*sleep*` reports a quarter of the file read, then
sleeps for ever, `*hog*` allocates until it fails; any other file gets its real host report (worker_jobs.host_report)."""

import os
import re
import time

from tb_gpu_advisor.readers.progress import report_progress
from tb_gpu_advisor.worker_jobs import host_report


def misbehaving_host_report(path, host, max_bytes=None):
    name = os.path.basename(path)
    if "stall" in name:
        while True:  # each match runs ~2**40 steps in C without releasing the GIL
            re.fullmatch(r"(a+)+b", "a" * 40)
    if "sleep" in name:
        report_progress(1, 4)
        while True:
            time.sleep(1)
    if "hog" in name:
        held = []
        while True:
            held.append(bytearray(64 * 2**20))
    return host_report(path, host, max_bytes)
