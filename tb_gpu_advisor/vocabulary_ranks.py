"""The words of the run-level view of a distributed run (the `ranks` object), shared by the CLI's sections and
the tab's Ranks card through vocabulary.exported()."""

# The per-rank table: a rank's mean time per step by component, the time it holds the others, its clock offset.
RANK_HEADERS = ("rank", "step", "compute", "input", "host", "peer wait", "transfer", "holds others", "offset")
# What the per-rank table's peer wait and transfer count: the rank's whole time in collectives.
RANK_TABLE_NOTE = (
    "peer wait + transfer is the rank's whole time in collectives, including any time its own work ran beside them "
    "(its own report's breakdown counts under Collectives only the time no other work ran: the exposed part)"
)
# The slowest rank's components against the median rank's; `start` is not a time it spent.
EXCESS_WORDS = (
    "Against the median rank, per step (start: how much later than the median rank it began its step, counted "
    "from leaving the previous step's last collective)"
)
# What a collective's transfer holds on a CPU backend (gloo), where no link is traced.
CPU_TRANSFER_WORDS = (
    "On a CPU backend the transfer is the backend's span after the last arrival (gloo's worker thread): it holds "
    "the copies and reductions, and the processes' scheduling on a host with more ranks than cores"
)
# Said under a table or list that shows the first steps only ({shown} of {total}).
FIRST_STEPS_WORDS = "The first {shown} of the {total} steps (every step is in the JSON report)."
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
# What the slowest rank's evidence rows are (ranks.slowest.evidence), before them.
EVIDENCE_WORDS = {
    "ops": "From its trace, its ops per step by self time against the median rank",
    "kernels": "From its trace, its kernels per step against the median rank",
    "input": "From its trace, its input spans per step against the median rank",
    "host": "From its trace, its host ops per step by self time against the median rank",
}
# The compute excess split (ranks.slowest.compute_split_ms).
COMPUTE_SPLIT_WORDS = "{more} in ops it runs more often, {slower} the same ops running slower"
# An input cause whose evidence is PyTorch's single-process DataLoader iterator (num_workers=0).
SINGLE_PROCESS_LOADER_WORDS = (
    "Its DataLoader loads each batch in the training process (_SingleProcessDataLoaderIter: num_workers=0), so the "
    "loading is on the step: look at what this rank's data or dataset does that the others' does not, and give the "
    "loader workers (num_workers > 0) to overlap it with the step."
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
        "tableNote": RANK_TABLE_NOTE,
        "excess": EXCESS_WORDS,
        "cpuTransfer": CPU_TRANSFER_WORDS,
        "evidence": EVIDENCE_WORDS,
        "computeSplit": COMPUTE_SPLIT_WORDS,
        "singleProcessLoader": SINGLE_PROCESS_LOADER_WORDS,
        "path": PATH_WORDS.format(step_time=STEP_TIME_WORDS),
    }
