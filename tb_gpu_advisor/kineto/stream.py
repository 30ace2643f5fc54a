"""Streams a Kineto trace (plain or gzip JSON): its events one at a time, and its small top-level values.

Numbers arrive as `int` or `decimal.Decimal` (never float), so microsecond timestamps with a fractional part
stay exact. Memory stays flat: a window of about a megabyte of text and one event object at a time; each
event is decoded by the standard library's C scanner.
"""

import codecs
import gzip
import json
import os
import zlib
from decimal import Decimal

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.errors import ProfileError

_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder(parse_float=Decimal)
# One JSON value (an event, or a top-level value other than traceEvents) may not be larger than this.
_MAX_VALUE_CHARS = 64 << 20


class _Text:
    """A growing window over the decoded text of the file; `pos` is the read position inside `buf`."""

    def __init__(self, handle, path):
        self.handle = handle
        self.path = path
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.consumed = 0  # characters dropped from the front of the window

    def more(self):
        """Reads one more chunk into the window; False at the end of the file."""
        if self.eof:
            return False
        try:
            data = self.handle.read(_CHUNK)
            text = self.decoder.decode(data, final=not data)
        except EOFError:
            raise ProfileError(self.path, "is truncated: the gzip stream ends early") from None
        except (gzip.BadGzipFile, zlib.error) as err:
            raise ProfileError(self.path, f"is a corrupt gzip file ({err})") from None
        except UnicodeDecodeError:
            raise ProfileError(self.path, "is not UTF-8 text, so not a JSON trace") from None
        except OSError as err:
            raise ProfileError(self.path, f"cannot read: {err.strerror or err}") from None
        if not data:
            self.eof = True
            return False
        if self.pos > _CHUNK:
            self.consumed += self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += text
        return True

    def peek(self):
        """The next non-blank character ('' at the end of the file), not consumed."""
        while True:
            buf, pos = self.buf, self.pos
            while pos < len(buf) and buf[pos] in _WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self.more():
                return ""

    def expect(self, chars, what):
        found = self.peek()
        if found == "" or found not in chars:
            self.fail(f"expected {what}")
        self.pos += 1
        return found

    def value(self):
        """Decodes the next JSON value; reads more text while the value runs past the window."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as err:
                if len(self.buf) - self.pos < _MAX_VALUE_CHARS and self.more():
                    continue
                self.fail(err.msg.lower(), at=err.pos)
            # A number at the very end of the window may continue in the next chunk.
            if end == len(self.buf) and not self.eof and self.more():
                continue
            self.pos = end
            return value

    def fail(self, problem, at=None):
        at = self.pos if at is None else at
        if self.eof and self.buf[at:].strip() == "":
            raise ProfileError(self.path, "is truncated: the JSON ends before the trace does")
        raise ProfileError(self.path, f"is not valid JSON: {problem} at character {self.consumed + at:,}")


def stream_trace(path, on_event, max_bytes=DEFAULT_MAX_FILE_BYTES):
    """Calls `on_event(event)` for each `traceEvents` item in file order; returns the other top-level values.

    Raises ProfileError for a missing, empty, oversized, truncated or non-JSON file, and for JSON that is not
    a Chrome trace object with a `traceEvents` list.
    """
    path = str(path)
    handle = _open(path, max_bytes)
    metadata = {}
    with handle:
        text = _Text(handle, path)
        first = text.peek()
        if first == "":
            raise ProfileError(path, "holds only blank text (the profiler wrote nothing)")
        if first != "{":
            if first in '["0123456789-tfn':
                raise ProfileError(path, "is JSON but not a PyTorch profiler trace (its top level is not an object "
                                         "with traceEvents)")
            raise ProfileError(path, "is not JSON text, so not a PyTorch profiler trace")
        text.pos += 1
        seen_events = False
        if text.peek() == "}":
            text.pos += 1
        else:
            while True:
                key = text.value()
                if not isinstance(key, str):
                    text.fail("expected a key")
                text.expect(":", "':' after a key")
                if key == "traceEvents" and text.peek() == "[":
                    seen_events = True
                    _stream_list(text, on_event)
                else:
                    metadata[key] = text.value()
                if text.expect(",}", "',' or '}'") == "}":
                    break
        if text.peek() != "":
            text.fail("extra data after the trace object")
    if not seen_events:
        raise ProfileError(path, "is JSON but not a PyTorch profiler trace (no traceEvents list)")
    return metadata


def _stream_list(text, on_event):
    text.expect("[", "'['")
    if text.peek() == "]":
        text.pos += 1
        return
    while True:
        on_event(text.value())
        if text.expect(",]", "',' or ']' in traceEvents") == "]":
            return


def _open(path, max_bytes):
    try:
        if os.path.isdir(path):
            raise ProfileError(path, "is a directory, not a .pt.trace.json file")
        size = os.path.getsize(path)
        raw = open(path, "rb")
    except FileNotFoundError:
        raise ProfileError(path, "no such file") from None
    except OSError as err:
        raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
    if size == 0:
        raw.close()
        raise ProfileError(path, "file is empty (the profiler wrote nothing)")
    if max_bytes and size > max_bytes:
        raw.close()
        raise ProfileError(path, f"file is {size / 2**20:,.0f} MB, above the {max_bytes / 2**20:,.0f} MB limit "
                                 "(raise it with --max-file-mb)")
    if raw.read(2) == _GZIP_MAGIC:
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb")
    raw.seek(0)
    return raw
