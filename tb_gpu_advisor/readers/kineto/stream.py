"""Streams a Kineto trace (plain or gzip JSON): its events as records (kineto.records), and its small
top-level values.

Numbers arrive as `int` or `decimal.Decimal` (never float), so microsecond timestamps with a fractional part
stay exact. Memory stays flat: a window of about a megabyte of text and the events of that window at a time.
With msgspec installed, the window's events up to its last `},` before a `{` are decoded in one batch,
straight into records: that text is the list's next events exactly when msgspec accepts `[` + text + `]`
(cut anywhere else, inside a string or an object, it is not a list of values). Whatever msgspec refuses, and
the window's last event, goes to the standard library's C scanner one event at a time, as everything does
without msgspec. Work is bounded before anything is built: only a regular file is opened, the size limit
applies to the decompressed text of a gzip file (checked as it inflates), one JSON value may hold at most
MAX_VALUE_CHARS characters, and nesting deeper than the decoder's recursion limit or a number too long for
Python is a one-line error naming the file.
"""

from __future__ import annotations

import codecs
import gzip
import json
import sys
import zlib
from collections.abc import Callable
from os import PathLike
from typing import Any, NoReturn
from decimal import Decimal

from tb_gpu_advisor.constants import DEFAULT_MAX_FILE_BYTES
from tb_gpu_advisor.errors import ProfileError
from tb_gpu_advisor.file_size import inflates_too_big, too_big
from tb_gpu_advisor.readers.kineto.records import BATCH_DECODER, BATCH_ERRORS, record
from tb_gpu_advisor.files.regular import check_unchanged, open_regular

_CHUNK = 1 << 20
_BATCH = 1 << 18  # characters of text decoded in one batch at most: its events and copies stay small
_GZIP_MAGIC = b"\x1f\x8b"
_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder(parse_float=Decimal)
# One JSON value (an event, or a top-level value other than traceEvents) may not be larger than this: the
# profiler's events are a few KB (the longest of the committed traces is 5,485 characters).
MAX_VALUE_CHARS = 4 << 20
# The top-level values the model reads; the others are decoded (to check the JSON) and dropped.
KEPT_KEYS = frozenset(
    {
        "deviceProperties",
        "distributedInfo",
        "host_name",  # the machine: ranks that name the same one share its clock
        "schemaVersion",
        "record_shapes",
        "with_stack",
        "profile_memory",
        "with_flops",  # kineto.capture_options
        "INFO",
        "WARNING",
        "ERROR",
    }
)  # kineto.profiler_log


class _Text:
    """A growing window over the decoded text of the file; `pos` is the read position inside `buf`."""

    def __init__(self, handle, path, max_bytes=None, inflated=False, batches=False):
        self.handle = handle
        self.path = path
        self.max_bytes = max_bytes
        self.inflated = inflated  # gzip: the limit is on the decompressed bytes
        self.read_bytes = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.consumed = 0  # characters dropped from the front of the window
        self.batches = batches and BATCH_DECODER is not None
        self.single_until = 0  # after a refused batch: events one at a time up to this character of the file

    def more(self) -> bool:
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
        self.read_bytes += len(data)
        if self.max_bytes and self.read_bytes > self.max_bytes:
            raise ProfileError(
                self.path,
                inflates_too_big(self.max_bytes)
                if self.inflated
                else too_big(self.read_bytes, self.max_bytes, at_least=True),
            )
        if self.pos > _CHUNK:
            self.consumed += self.pos
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += text
        return True

    def peek(self) -> str:
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

    def expect(self, chars: str, what: str) -> str:
        found = self.peek()
        if found == "" or found not in chars:
            self.fail(f"expected {what}")
        self.pos += 1
        return found

    def value(self) -> Any:
        """Decodes the next JSON value; reads more text while the value runs past the window."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as err:
                if len(self.buf) - self.pos <= MAX_VALUE_CHARS and self.more():
                    continue
                if len(self.buf) - self.pos > MAX_VALUE_CHARS:
                    self.too_long()
                self.fail(err.msg.lower(), at=err.pos)
            except RecursionError:
                raise ProfileError(
                    self.path,
                    f"nests JSON values too deeply (at character "
                    f"{self.consumed + self.pos:,}): no profiler writes such nesting, so "
                    "the file is corrupt or not a trace",
                ) from None
            except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
                raise ProfileError(
                    self.path,
                    f"holds an integer of more than {sys.get_int_max_str_digits():,} "
                    f"digits (at character {self.consumed + self.pos:,}): the file is "
                    "corrupt or not a trace",
                ) from None
            # A number at the very end of the window may continue in the next chunk.
            if end == len(self.buf) and not self.eof and self.more():
                continue
            if end - self.pos > MAX_VALUE_CHARS:
                self.too_long()
            self.pos = end
            return value

    def batch(self) -> list[Any] | None:
        """The next events, from the read position to the window's last `},`, decoded by msgspec; None when
        there is no such batch (the caller reads one event the standard library's way)."""
        if not self.batches or self.consumed + self.pos < self.single_until:
            return None
        end = _last_boundary(self.buf, self.pos, self.pos + _BATCH)
        if end < 0 and len(self.buf) - self.pos < _CHUNK and self.more():
            end = _last_boundary(self.buf, self.pos, self.pos + _BATCH)
        if end < 0:  # not one whole event and its comma in the window: skip it
            self.single_until = self.consumed + len(self.buf)
            return None
        try:
            events = BATCH_DECODER.decode("[" + self.buf[self.pos : end + 1] + "]")
        except BATCH_ERRORS:
            self.single_until = self.consumed + end + 2
            return None
        self.pos = end + 2
        return events

    def too_long(self) -> NoReturn:
        raise ProfileError(
            self.path,
            f"holds a JSON value longer than {MAX_VALUE_CHARS:,} characters (at "
            f"character {self.consumed + self.pos:,}), far more than any profiler event: "
            "not a trace this tool reads",
        )

    def fail(self, problem: str, at: int | None = None) -> NoReturn:
        at = self.pos if at is None else at
        if self.eof and self.buf[at:].strip() == "":
            raise ProfileError(self.path, "is truncated: the JSON ends before the trace does")
        raise ProfileError(self.path, f"is not valid JSON: {problem} at character {self.consumed + at:,}")


def _last_boundary(buf, start, stop):
    """The position of the last `}` in buf[start:stop] followed by `,` and (after blanks) `{`: likely, not surely,
    the end of an event (a kernel name may hold `{lambda()#1}, {`); -1 when there is none."""
    end = buf.rfind("},", start, stop)
    while end >= 0 and buf[end + 2 : end + 18].lstrip(_WHITESPACE)[:1] != "{":
        end = buf.rfind("},", start, end)
    return end


def stream_trace(
    path: str | PathLike[str],
    on_event: Callable[[Any], object],
    max_bytes: int | None = DEFAULT_MAX_FILE_BYTES,
    on_batch: Callable[[list[Any]], object] | None = None,
) -> dict[str, Any]:
    """Calls `on_event(record)` for each `traceEvents` item that is an object, in file order, or (given
    `on_batch`, with msgspec installed) `on_batch([BatchEvent])` for a batch of them; returns the top-level
    values of KEPT_KEYS found.

    Raises ProfileError for a missing, non-regular, empty, oversized (also once decompressed), truncated or
    non-JSON file, for JSON that is not a Chrome trace object with a `traceEvents` list, and FileChanged for a
    file that changed while it was read.
    """
    path = str(path)
    raw, identity = _open(path, max_bytes)
    try:
        inflated = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
    except OSError as err:
        raw.close()
        raise ProfileError(path, f"cannot read: {err.strerror or err}") from None
    handle = gzip.GzipFile(fileobj=raw, mode="rb") if inflated else raw
    metadata = {}
    with raw, handle:
        text = _Text(handle, path, max_bytes, inflated, on_batch is not None)
        first = text.peek()
        if first == "":
            raise ProfileError(path, "holds only blank text (the profiler wrote nothing)")
        if first != "{":
            if first in '["0123456789-tfn':
                raise ProfileError(
                    path, "is JSON but not a PyTorch profiler trace (its top level is not an object with traceEvents)"
                )
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
                    _stream_list(text, on_event, on_batch)
                else:
                    value = text.value()
                    if key in KEPT_KEYS:
                        metadata[key] = value
                if text.expect(",}", "',' or '}'") == "}":
                    break
        if text.peek() != "":
            text.fail("extra data after the trace object")
        check_unchanged(path, raw, identity)
    if not seen_events:
        raise ProfileError(path, "is JSON but not a PyTorch profiler trace (no traceEvents list)")
    return metadata


def _stream_list(text, on_event, on_batch):
    text.expect("[", "'['")
    if text.peek() == "]":
        text.pos += 1
        return
    while True:
        events = text.batch()
        if events is not None:
            on_batch(events)
            continue
        event = record(text.value())
        if event is not None:
            on_event(event)
        if text.expect(",]", "',' or ']' in traceEvents") == "]":
            return


def _open(path, max_bytes):
    """(binary file, Identity) of a regular file of at most `max_bytes`; ProfileError otherwise (a FIFO or a
    device is never opened: files/regular.py)."""
    raw, identity = open_regular(path)
    if identity.size == 0:
        raw.close()
        raise ProfileError(path, "file is empty (the profiler wrote nothing)")
    if max_bytes and identity.size > max_bytes:
        raw.close()
        raise ProfileError(path, too_big(identity.size, max_bytes))
    return raw, identity
