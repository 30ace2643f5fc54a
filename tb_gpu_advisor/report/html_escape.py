"""Text escaped for the HTML report, each number kept on one line with its unit."""

from html import escape

from tb_gpu_advisor.vocabulary import bind_units


def _e(value):
    """Escaped text whose numbers keep their units on the same line."""
    return escape(bind_units(value), quote=True)
