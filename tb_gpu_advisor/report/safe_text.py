"""Control characters from a trace (kernel, op and file names) become visible escapes before text reaches a
terminal, a markdown or an HTML page, so a name cannot retitle a terminal, move its cursor or reorder what is
shown; a lone surrogate (a JSON `\\ud800` escape, a file name Python could not decode) becomes U+FFFD, so every
output encodes as UTF-8."""

from __future__ import annotations

import re

# C0 and C1 controls and DEL, the Unicode bidirectional embeddings, overrides and isolates, and the invisible
# direction marks (ALM, LRM, RLM).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def valid_unicode(text: str) -> str:
    """`text` with each surrogate code point (never valid alone in UTF-8) replaced by U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text)


def _escaped(match):
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_controls(text: str, keep: str = "\n") -> str:
    """`text` with each control character except those in `keep` written as a `\\xNN` (or `\\uNNNN`) escape."""
    text = valid_unicode(str(text))
    if keep:
        return "".join(
            _UNSAFE.sub(_escaped, part) if part not in keep else part
            for part in re.split(f"([{re.escape(keep)}])", text)
        )
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
