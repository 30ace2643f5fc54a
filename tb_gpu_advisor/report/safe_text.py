"""Control characters from a trace (kernel, op and file names) become visible escapes before text reaches a
terminal or a markdown page, so a name cannot retitle a terminal, move its cursor or reorder what is shown."""

import re

# C0 and C1 controls and DEL, and the Unicode bidirectional overrides and isolates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escaped(match):
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xff else f"\\u{code:04x}"


def escape_controls(text, keep="\n"):
    """`text` with each control character except those in `keep` written as a `\\xNN` (or `\\uNNNN`) escape."""
    text = str(text)
    if keep:
        return "".join(_UNSAFE.sub(_escaped, part) if part not in keep else part
                       for part in re.split(f"([{re.escape(keep)}])", text))
    return _UNSAFE.sub(_escaped, text)


class EscapingWriter:
    """A text stream that escapes control characters (newlines and tabs kept) in all it writes: the CLI's
    stdout and stderr, so no message, whatever file or name it quotes, reaches the terminal raw."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._stream.write(escape_controls(text, keep="\n\t"))

    @property
    def raw(self):
        """The stream itself, for text of our own that needs a control character (a progress bar's \\r)."""
        return self._stream

    def __getattr__(self, name):
        return getattr(self._stream, name)
