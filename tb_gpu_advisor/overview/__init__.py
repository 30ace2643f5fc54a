"""The team overview: one row per run of a logdir (verdict, confidence, step time, GPU busy, top finding, change
against the previous run of its series), summaries persisted outside the logdir."""
