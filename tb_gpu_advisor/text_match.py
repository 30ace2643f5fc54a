"""Linear-time tests on names from a trace, for what a backtracking regex would do in quadratic time or worse."""


def in_order(text, *parts):
    """True when `parts` occur in `text` one after another, without overlap, on one line: what the regex
    `part1.*part2` finds, in one pass (the earliest end of each part leaves the most room for the next)."""
    for line in text.split("\n"):
        at = 0
        for part in parts:
            at = line.find(part, at)
            if at < 0:
                break
            at += len(part)
        else:
            return True
    return False
