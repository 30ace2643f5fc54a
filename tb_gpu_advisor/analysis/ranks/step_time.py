"""The run's step time, defined once for every run-level view (headline, heat map, critical path, what-ifs).

Step k of the run is the window on the aligned clock from the last rank to start it to the last rank to end it.
A rank's steps follow one another (its step k starts where its step k-1 ended), so the last start of step k is the
last end of step k-1: the windows tile the run without overlap or gap, their sum is the run's wall time over the
matched steps, and their mean is the time per step the job runs at. The earliest start to the latest end (the
step's span) overlaps the next step's window by the stagger between ranks and overstates the step; one rank's own
step time moves with where that rank's boundary falls and differs from rank to rank within a step.
"""

import statistics


def step_windows_ps(alignment):
    """(start, end) in ps on the aligned clock of each matched step: the last rank's start to the last rank's end."""
    return tuple((max(step.starts_ps), max(step.ends_ps)) for step in alignment.steps)


def step_times_ms(alignment):
    """The run's time per matched step (ms): the length of each step window."""
    return [max(0, end - start) / 1e9 for start, end in step_windows_ps(alignment)]


def run_step_ms(step_ms):
    """The run's step time (ms) from its per-step times: their mean (total time over steps), None with no step."""
    return round(statistics.mean(step_ms), 6) if step_ms else None
