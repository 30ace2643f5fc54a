"""What-if of the communication fixes: exposed collectives overlapped with the backward pass's compute, as far
as there is backward compute not already hiding collectives; a straggler brought to the next slowest GPU; the
step's work spread over GPUs the job left idle."""

from tb_gpu_advisor.vocabulary import TIMES
from tb_gpu_advisor.whatif.estimate import bound, model


def overlap_collectives(window_ms, exposed_ms, compute_ms, overlapped_ms, backward_share, whose="the busiest GPU"):
    """The window with the exposed collective time hidden behind at most `backward_share` of the compute of
    `whose` (`compute_ms`), less the collective time that already overlaps compute (`overlapped_ms`, per GPU).
    A model where that compute is what limits the hiding (the backward share is a model of this trace); where
    there is room for all of it, the figure is every exposed collective hidden: a ceiling no overlap passes (it
    takes the overlap as perfect), so an upper bound."""
    room = max(0.0, backward_share * compute_ms - overlapped_ms)
    hidden = min(exposed_ms, room)
    derivation = (
        f"the exposed collectives ({exposed_ms:.3g} ms) overlapped with the backward pass, taken as "
        f"{backward_share:.0%} of the compute ({compute_ms:.3g} ms on {whose}), less the "
        f"{overlapped_ms:.3g} ms of collectives that already overlap compute"
    )
    if room >= exposed_ms:
        return bound(
            window_ms,
            window_ms - hidden,
            f"upper bound: {derivation}: room for all of them, so all {hidden:.3g} ms hidden (perfect overlap)",
        )
    return model(window_ms, window_ms - hidden, f"model: {derivation}: {hidden:.3g} ms hidden")


def beyond_overlap(window_ms, exposed_ms, hidden_ms):
    """The window without any exposed collective time (`exposed_ms`): an upper bound of fewer or smaller
    collectives (or a faster link). Communicating less shortens every collective, the part overlapping could
    hide (`hidden_ms`) as well as the rest, so the ceiling is all of the exposed time, not only the rest."""
    rest = max(0.0, exposed_ms - hidden_ms)
    return bound(
        window_ms,
        window_ms - exposed_ms,
        f"upper bound: all {exposed_ms:.3g} ms of exposed collectives removed by fewer or smaller collectives "
        f"(or a faster link): the {rest:.3g} ms that overlap cannot hide and the {hidden_ms:.3g} ms it could, "
        "since fewer bytes shorten both",
    )


def straggler(window_ms, excess_ms):
    """The window with the slowest GPU computing no longer than the next slowest: the others wait that much less."""
    return model(
        window_ms,
        window_ms - excess_ms,
        "model: the slowest GPU computing no longer than the next slowest, so the step waits that much less",
    )


def spread_over_idle_gpus(window_ms, compute_ms, working, total):
    """The window with the same global batch split over all `total` GPUs instead of `working`: the busiest GPU's
    compute (`compute_ms`) shrinks to working/total of itself; an upper bound (perfect scaling, no more
    communication, the host's share unchanged)."""
    saved = compute_ms * (1.0 - working / total) if total > working > 0 else 0.0
    return bound(
        window_ms,
        window_ms - saved,
        f"upper bound: the same global batch split over all {total} GPUs instead of {working}, the busiest "
        f"GPU's compute ({compute_ms:.3g} ms) shrinking to {working}/{total} of itself (perfect scaling, "
        "no added communication); or, at the same per-GPU batch, up to "
        f"{total / working:.3g}{TIMES} the examples per second",
    )
