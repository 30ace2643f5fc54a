"""Whether a candidate's trace still shows the cause of a baseline finding that no longer fires."""

# tf.data stages (configuration.tf_data_options) whose presence or absence is the cause of a finding.
_TF_DATA_STAGE_PRESENT = {"input.sequential_map": "sequential map"}
_TF_DATA_STAGE_MISSING = {
    "input.no_prefetch": ("prefetch", "prefetch to device"),
    "input.no_cache": ("cache", "snapshot"),
}
# Host op types that are the cause of a finding (report host_ops, the ops with the most host time, named
# "name:Type" or by type).
_HOST_OPS = {"host.python_function": {"EagerPyFunc", "PyFunc", "PyFuncStateless"}}


def cause_still_present(finding_id, candidate):
    """True when the candidate HostReport still shows `finding_id`'s cause (the same tf.data stage, or the same
    host ops), so the finding stopped costing time without its cause going; False when it does not show it;
    None where the trace cannot tell cheaply."""
    config = candidate.get("configuration") or {}
    options = set(config.get("tf_data_options") or ())
    if finding_id in _TF_DATA_STAGE_PRESENT:
        return _TF_DATA_STAGE_PRESENT[finding_id] in options if options else None
    if finding_id in _TF_DATA_STAGE_MISSING:
        return not options & set(_TF_DATA_STAGE_MISSING[finding_id]) if options else None
    if finding_id in _HOST_OPS:
        names = {str(op.get("name")).rsplit(":", 1)[-1] for op in candidate.get("host_ops") or ()}
        return True if names & _HOST_OPS[finding_id] else None
    return None
