"""What-if models: each fix applied to the trace's own timeline, the step time re-derived."""
