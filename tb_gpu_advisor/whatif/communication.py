"""What-if of the communication fixes: exposed collectives overlapped with the backward pass's compute, as far
as there is backward compute not already hiding collectives; a straggler brought to the next slowest GPU."""

from tb_gpu_advisor.whatif.estimate import model


def overlap_collectives(window_ms, exposed_ms, compute_ms, overlapped_ms, backward_share):
    """The window with the exposed collective time hidden behind at most `backward_share` of the busiest GPU's
    compute (`compute_ms`), less the collective time that already overlaps compute (`overlapped_ms`, per GPU)."""
    room = max(0.0, backward_share * compute_ms - overlapped_ms)
    hidden = min(exposed_ms, room)
    return model(window_ms, window_ms - hidden,
                 f"model: the exposed collectives ({exposed_ms:.3g} ms) overlapped with the backward pass, taken as "
                 f"{backward_share:.0%} of the compute ({compute_ms:.3g} ms on the busiest GPU), less the "
                 f"{overlapped_ms:.3g} ms of collectives that already overlap compute: {hidden:.3g} ms hidden")


def straggler(window_ms, excess_ms):
    """The window with the slowest GPU computing no longer than the next slowest: the others wait that much less."""
    return model(window_ms, window_ms - excess_ms,
                 "model: the slowest GPU computing no longer than the next slowest, so the step waits that much less")
