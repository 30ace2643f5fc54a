"""The words of the run-level view of a distributed run (the `ranks` object), shared by the CLI's sections and
the tab's Ranks card through vocabulary.exported()."""

# The per-rank table: a rank's mean time per step by component, the time it holds the others, its clock offset.
RANK_HEADERS = ("rank", "step", "compute", "input", "host", "peer wait", "transfer", "holds others", "offset")
# The collectives matched across ranks, per kind.
RANK_COLLECTIVE_HEADERS = ("collective", "calls", "ranks", "size", "wait", "transfer", "bus bw", "link")
# What a rank's step went to besides compute (ranks.cause_order), as the rank x step view names them.
RANK_STEP_CAUSE_LABELS = {
    "compute": "compute",
    "input": "input",
    "host": "host",
    "peer_wait": "peer wait",
    "transfer": "transfer",
    "other": "other (untraced or idle)",
}
# How the run's step time is defined (analysis.ranks.step_time): the headline, the heat map's run row and every
# critical path read it.
STEP_TIME_WORDS = "from the last rank to start each step to the last rank to end it, on one clock"
# The critical path's definition, before the paths.
PATH_WORDS = (
    "What set each step's time, over the run's step window ({step_time}; the segments sum to it): the work of the "
    "rank that arrived last at each collective, the collective's transfer until its last rank left, and the tail "
    "of the rank that ended the step last."
)
# Said of the ranks that arrive as late as the slowest one in most steps ({ranks}: their list).
AS_LATE_WORDS = "Ranks {ranks} arrive as late in most steps: they hold the others back as much."
# The what-ifs, by name; {rank} is the rank the estimate moves, {ranks} the ranks when it moves several.
RANK_WHAT_IF_WORDS = {
    "rank_at_median": "if rank {rank} matched the median rank",
    "ranks_at_median": "if ranks {ranks} matched the median rank",
    "collectives_overlapped": "if the collectives on the critical path overlapped with compute",
    "collectives_at_link_peak": "if the collectives reached the link's peak",
}


def exported():
    """The words as the tab receives them (vocabulary.js `ranks`)."""
    return {
        "headers": list(RANK_HEADERS),
        "collectiveHeaders": list(RANK_COLLECTIVE_HEADERS),
        "causes": RANK_STEP_CAUSE_LABELS,
        "whatIf": RANK_WHAT_IF_WORDS,
        "asLate": AS_LATE_WORDS,
        "stepTime": STEP_TIME_WORDS,
        "path": PATH_WORDS.format(step_time=STEP_TIME_WORDS),
    }
