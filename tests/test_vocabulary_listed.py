"""vocabulary.listed: a list read from a trace shows a few items and a count (review G17)."""

from tb_gpu_advisor.vocabulary import listed


def test_short_lists_are_whole():
    assert listed([]) == ""
    assert listed(["a"]) == "a"
    assert listed(["a", "b", "c"]) == "a, b, c"
    assert listed(["a", "b"], last=" and ") == "a and b"


def test_long_lists_are_capped_with_a_count():
    assert listed(range(1, 131)) == "1, 2, 3, 4, 5 and 125 more"
    assert listed(["a", "b", "c"], limit=2) == "a, b and 1 more"
