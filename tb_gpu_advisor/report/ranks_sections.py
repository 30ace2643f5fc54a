"""Text and markdown sections of the run report's `ranks` object: the run-level view, shown above the ranks' own
reports."""

from __future__ import annotations

from tb_gpu_advisor.analysis.collective_bandwidth import LARGE_COLLECTIVE_BYTES
from tb_gpu_advisor.report import units
from tb_gpu_advisor.report.section_model import Section, Table
from tb_gpu_advisor.vocabulary_ranks import (
    AS_LATE_WORDS,
    COMPUTE_SPLIT_WORDS,
    CPU_TRANSFER_WORDS,
    EVIDENCE_WORDS,
    EXCESS_WORDS,
    FIRST_STEPS_WORDS,
    SINGLE_PROCESS_LOADER_WORDS,
    PATH_WORDS,
    RANK_COLLECTIVE_HEADERS,
    RANK_HEADERS,
    RANK_TABLE_NOTE,
    RANK_WHAT_IF_WORDS,
    STEP_TIME_WORDS,
)

MAX_STEP_COLUMNS = 8  # steps shown in the rank x step table (the JSON has them all)
MAX_RANK_ROWS = 32  # ranks listed in the tables (the first ones, and the slowest and those as late wherever they are)


def ranks_sections(run_report: dict) -> list:
    """Sections of the run-level view (none without a `ranks` object)."""
    view = run_report.get("ranks")
    if not view:
        return []
    return [_summary(view), _heat(view), _collectives(view), _paths(view)]


def _label(view):
    parts = [f"{view['rank_count']} {_unit(view)}s"]
    if view["world_size"] and view["world_size"] != view["rank_count"]:
        parts.append(f"of {view['world_size']}")
    parts += [p for p in (view["backend"], view["device"]) if p]
    return ", ".join(parts)


def _summary(view):
    lines = [
        f"{view['step_count']} steps on every {_unit(view)}, {units.duration_ms(view['step_time_ms'])} per step "
        f"({STEP_TIME_WORDS})."
    ]
    slow = view["slowest"]
    peer = view.get("late_peer")
    if peer:
        lines.extend(_late_peer_lines(peer))
    if slow is None and peer and peer["late"]:
        pass
    elif slow is None:
        lines.append(
            "No rank holds the others back: none came last at the collectives in most steps and cost the "
            "others a tenth of the step."
        )
    else:
        lines.append(
            f"Slowest {_unit(view)}: {_who(slow)}, last to arrive in {slow['late_steps']} of "
            f"{slow['steps']} steps; the others wait {units.duration_ms(slow['held_others_ms_per_step'])} "
            "per step for it."
        )
        if slow["as_late"]:
            lines.append(AS_LATE_WORDS.format(ranks=", ".join(str(r) for r in slow["as_late"])))
        lines.append(
            f"Why: {slow['cause_text']}: {units.duration_ms(slow['cause_ms_per_step'])} more per step "
            "than the median rank."
        )
        excess = ", ".join(f"{k} {_signed_ms(v)}{_split(slow, k)}" for k, v in slow["excess_ms_per_step"].items())
        lines.append(f"  {EXCESS_WORDS}: {excess}.")
        if slow["work"]:
            lines.append(f"  {EVIDENCE_WORDS[slow['evidence']]}:")
        for row in slow["work"][:3]:
            lines.append(
                f"  {row['name']}: {_calls(row['calls_per_step'])}, "
                f"{units.duration_ms(row['ms_per_step'])} per step (median rank: "
                f"{_calls(row['median_calls_per_step'])}, {units.duration_ms(row['median_ms_per_step'])})"
            )
        if single_process_loader(slow):
            lines.append(f"  {SINGLE_PROCESS_LOADER_WORDS}")
    for item in view["what_if"]:
        if item["step_ms"] is None and item["name"] == "collectives_overlapped":
            lines.append(f"What-if {_what_if_words(item)}: none: {item['assumes']}.")
            continue
        if item["step_ms"] is None:
            continue
        if item["name"] == "rank_at_median" and item["rank"] is None:
            continue
        words = _what_if_words(item)
        lines.append(
            f"What-if (a model) {words}: {units.duration_ms(item['step_ms'])} per step instead of "
            f"{units.duration_ms(item['baseline_ms'])} ({item['speedup']:g}x). Assumes {item['assumes']}."
        )
    clock = view["clock"]
    if clock.get("one_clock"):
        lines.append("One clock: every rank runs on one machine and its trace gives absolute times, so no offset.")
    elif clock["offsets_from_calls"]:
        residual = clock.get("residual_ms")
        lines.append(
            f"Clocks aligned on {clock['offsets_from_calls']} collective ends"
            + (
                f" (after alignment a call's ends still spread {units.duration_ms(residual)}, the median)."
                if residual is not None
                else "."
            )
        )
    else:
        lines.append("Clocks taken as recorded.")
    lines.extend(f"Note: {note}." for note in view["notes"])
    shown = shown_positions(view)
    lines.append(f"In the table, {RANK_TABLE_NOTE}.")
    if len(shown) < len(view["ranks"]):
        lines.append(
            f"The tables list {len(shown)} of the {len(view['ranks'])} ranks: the first {MAX_RANK_ROWS}, and the "
            "slowest and those as late as it (every rank is in the JSON report)."
        )
    rows = tuple(
        (
            str(r["rank"]),
            units.duration_ms(r["mean"]["step_ms"]),
            units.duration_ms(r["mean"]["compute_ms"]),
            units.duration_ms(r["mean"]["input_ms"]),
            units.duration_ms(r["mean"]["host_ms"]),
            units.duration_ms(r["mean"]["peer_wait_ms"]),
            units.duration_ms(r["mean"]["transfer_ms"]),
            units.duration_ms(r["held_others_ms_per_step"]),
            _signed_ms(r["clock_offset_ms"]),
        )
        for r in (view["ranks"][position] for position in shown_positions(view))
    )
    table = Table(
        RANK_HEADERS,
        rows,
        (False,) + (True,) * 8,
    )
    return Section(f"Ranks ({_label(view)})", lines=tuple(lines), table=table)


def _late_peer_lines(peer):
    missing = ", ".join(str(r) for r in peer["missing_ranks"])
    plural = "s" if len(peer["missing_ranks"]) > 1 else ""
    after = units.duration_ms(peer["after_arrival_ms_per_step"])
    if not peer["late"]:
        return [
            f"Rank{plural} {missing} of the job not captured: the captured ranks' time after their last arrival "
            f"({after} per step at least) is waiting for a peer that was not captured (rank{plural} {missing}) "
            "or transfer; the split and the bus bandwidth need every rank's trace."
        ]
    return [
        f"Why the step waits: a late peer, rank{plural} {missing}, not captured: in {peer['steps']} of "
        f"{peer['of_steps']} steps every captured rank arrived at the collectives and still spent {after} per step "
        f"there: waiting for a peer that was not captured (rank{plural} {missing}), or transfer (the split needs "
        "its trace). No captured rank holds the others back; capture every rank into the run directory."
    ]


def _first_steps(view):
    """A line saying the steps shown are the first ones, when the run has more."""
    total = len(view["steps"])
    return (FIRST_STEPS_WORDS.format(shown=MAX_STEP_COLUMNS, total=total),) if total > MAX_STEP_COLUMNS else ()


def _unit(view):
    """ "host" for the hosts of an XPlane session (they name no rank: each is known by its host name), else "rank"."""
    return "host" if view["ranks"] and all(isinstance(r["rank"], str) for r in view["ranks"]) else "rank"


def _calls(count):
    return f"{count:g} call" + ("" if count == 1 else "s")


def _split(slow, component):
    """The compute excess in words: how much is more work and how much the same work slower."""
    split = slow.get("compute_split_ms")
    if component != "compute" or not split or not (split["more_work"] > 0 or split["same_work_slower"] > 0):
        return ""
    words = COMPUTE_SPLIT_WORDS.format(
        more=units.duration_ms(split["more_work"]), slower=units.duration_ms(split["same_work_slower"])
    )
    return f" ({words})"


def single_process_loader(slow):
    """Whether an input cause's evidence is PyTorch's single-process DataLoader iterator."""
    return slow["evidence"] == "input" and any("_SingleProcessDataLoaderIter" in row["name"] for row in slow["work"])


def shown_positions(view):
    """The positions of the ranks the tables list: the first MAX_RANK_ROWS, then the slowest rank and the ranks
    as late as it when they come later."""
    slow = view["slowest"]
    named = {slow["rank"], *slow["as_late"]} if slow else set()
    return [i for i, rank in enumerate(view["ranks"]) if i < MAX_RANK_ROWS or rank["rank"] in named]


def _signed_ms(value):
    return ("+" if value >= 0 else "-") + units.duration_ms(abs(value))


def _heat(view):
    steps = view["steps"][:MAX_STEP_COLUMNS]
    headers = ("rank",) + tuple(f"step {s['step']}" for s in steps)
    rows = [("run",) + tuple(f"{s['step_time_ms']:.1f}" for s in steps)]
    for position in shown_positions(view):
        rank = view["ranks"][position]
        rows.append(
            (str(rank["rank"]),)
            + tuple(f"{s['cells'][position]['step_ms']:.1f} {_short(s['cells'][position]['cause'])}" for s in steps)
        )
    lines = (
        f"Step time (ms) of the run ({STEP_TIME_WORDS}) and of each rank (its own step's start to end), and what "
        "took most of the rank's: comp = compute (also when nothing else took a tenth of it), wait = waiting for "
        "the last rank at a collective, xfer = transfer, in = input, host, other = untraced or idle.",
    ) + _first_steps(view)
    return Section("Rank x step", lines=lines, table=Table(headers, tuple(rows), (False,) + (True,) * len(steps)))


def _short(cause):
    return {"peer_wait": "wait", "transfer": "xfer", "input": "in", "compute": "comp"}.get(cause, cause)


def _collectives(view):
    if not view["collectives"]:
        return Section("Collectives across ranks", lines=("No collective is matched on every rank.",))
    rows = tuple(
        (
            k["collective"],
            units.count(k["calls"]),
            units.count(k["group_size"]),
            units.size_bytes(k["median_bytes"]),
            units.duration_ms(k["median_wait_ms"]),
            units.duration_ms(k["median_transfer_ms"]),
            units.rate_gbps(k["busbw_gbps"]),
            units.rate_gbps(k["link_gbps"]),
        )
        for k in view["collectives"]
    )
    link = view["link"]
    lines = (
        (
            "Each call split per rank into waiting for the last rank to arrive and the transfer after it; bus "
            "bandwidth (NCCL-tests' definition) over the median transfer.",
            f"Link: {link}." if link else "Link: not in the trace (a CPU run): no peak to compare with.",
        )
        + ((f"{CPU_TRANSFER_WORDS}.",) if view["device"] == "cpu" else ())
        + _latency_bound(view["collectives"])
    )
    return Section(
        "Collectives across ranks",
        lines=lines,
        table=Table(RANK_COLLECTIVE_HEADERS, rows, (False,) + (True,) * 7),
    )


def _latency_bound(kinds):
    """A line naming the kinds whose calls are too small to run at bus bandwidth (NCCL's latency sets their time)."""
    small = [k for k in kinds if k["median_bytes"] and k["median_bytes"] < LARGE_COLLECTIVE_BYTES]
    if not small:
        return ()
    names = ", ".join(f"{k['collective']} {units.size_bytes(k['median_bytes'])}" for k in small)
    return (
        f"Small calls ({names}; under {units.size_bytes(LARGE_COLLECTIVE_BYTES)} a call): per-call latency weighs "
        "on their time, so their bus bandwidth is a floor, not a measure of the link, and no share of its peak is "
        "given.",
    )


def _paths(view):
    lines = [PATH_WORDS.format(step_time=STEP_TIME_WORDS), *_first_steps(view)]
    cells = {step["step"]: step["cells"] for step in view["steps"]}
    positions = {rank["rank"]: i for i, rank in enumerate(view["ranks"])}
    for path in view["critical_path"][:MAX_STEP_COLUMNS]:
        waits = _waits_in_work(cells.get(path["step"]), positions)
        lines.append(f"step {path['step']} ({units.duration_ms(path['step_ms'])}): {_chain(path['segments'], waits)}")
    return Section("Critical path (across ranks)", lines=tuple(lines))


def _waits_in_work(cells, positions):
    """{rank: (part, ms)}: the input or host time of each rank in the step (its cells), which a "work" segment of
    that rank holds as well as compute: a DataLoader's wait is on the path, but it is not computing."""
    found = {}
    for rank, position in positions.items():
        cell = cells[position] if cells and position < len(cells) else None
        if cell:
            part = max(("input", "host"), key=lambda key: cell[f"{key}_ms"])
            found[rank] = (part, cell[f"{part}_ms"])
    return found


def _work_words(rank, length, waits):
    """A work segment's share that is the rank's input (or host) time in the step, when that is a tenth of it."""
    part, ms = waits.get(rank, (None, 0.0))
    if not part or ms < 0.1 * length:
        return ""
    return f" (its {part} this step: {units.duration_ms(min(ms, length))})"


def _chain(segments, waits=None):
    """The path's segments in order, consecutive ones of the same kind and rank merged (`x5`: five calls); a rank's
    work names its input or host time in the step (`waits`, _waits_in_work) when that is a tenth of it."""
    waits = waits or {}
    merged = []
    for segment in segments:
        key = (segment["kind"], segment["rank"], segment["collective"])
        length = segment["end_ms"] - segment["start_ms"]
        if merged and merged[-1][0] == key:
            merged[-1][1] += length
            merged[-1][2] += 1
        else:
            merged.append([key, length, 1])
    if len(merged) > MAX_STEP_COLUMNS:
        totals = {}
        for (kind, rank, collective), length, _ in merged:
            name = f"{collective} transfer" if kind == "collective" else f"rank {rank} {kind}"
            totals[name] = totals.get(name, 0.0) + length
        return (
            ", ".join(
                f"{name} {units.duration_ms(ms)}" for name, ms in sorted(totals.items(), key=lambda item: -item[1])
            )
            + " (in total)"
        )
    parts = []
    for (kind, rank, collective), length, calls in merged:
        times = f" x{calls}" if calls > 1 else ""
        name = f"{collective} transfer{times}" if kind == "collective" else f"rank {rank} {kind}"
        extra = _work_words(rank, length, waits) if kind == "work" else ""
        parts.append(f"{name} {units.duration_ms(length)}{extra}")
    return " -> ".join(parts) or "no segment"


def _what_if_words(item):
    """A what-if's condition in words: the rank it moves, or the ranks when it moves several."""
    if len(item["ranks"]) > 1:
        return RANK_WHAT_IF_WORDS["ranks_at_median"].format(ranks=", ".join(str(r) for r in item["ranks"]))
    return RANK_WHAT_IF_WORDS[item["name"]].format(rank=item["rank"])


def _who(slow):
    """The slowest rank and its host (once, when the host is its name: an XPlane session's hosts)."""
    return str(slow["rank"]) if slow["rank"] == slow["host"] else f"{slow['rank']} ({slow['host']})"
