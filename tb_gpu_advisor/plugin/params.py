"""Validates query parameters; run and host ids are opaque keys, never paths."""

MAX_ID_CHARS = 512


class RequestError(Exception):
    """A request the plugin refuses; `http_code` is 400 (malformed) or 404 (unknown)."""

    def __init__(self, http_code, message):
        super().__init__(message)
        self.http_code = http_code
        self.message = message


def bad_request(message):
    return RequestError(400, message)


def not_found(message):
    return RequestError(404, message)


def _looks_like_path_trick(value, allow_slash):
    if "\\" in value or value.startswith("/") or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return True
    segments = value.split("/")
    if not allow_slash and len(segments) > 1:
        return True
    return any(segment in ("", ".", "..") for segment in segments)


def identifier(args, name, allow_slash=False):
    """The query parameter `name` as an id to look up: present, short, and not spelling a path trick."""
    value = args.get(name)
    if value is None or value == "":
        raise bad_request(f"missing query parameter {name!r}")
    if len(value) > MAX_ID_CHARS:
        raise bad_request(f"parameter {name!r} is longer than {MAX_ID_CHARS} characters")
    if _looks_like_path_trick(value, allow_slash):
        raise bad_request(f"parameter {name!r} is not a valid {name} id")
    return value


def integer(args, name, default, minimum, maximum=None, clamp=False):
    """An integer parameter; out of range is an error, or clamped into range when `clamp`."""
    raw = args.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw, 10)
    except ValueError:
        raise bad_request(f"parameter {name!r} must be an integer, got {raw[:40]!r}") from None
    if clamp:
        return max(minimum, value if maximum is None else min(value, maximum))
    if value < minimum or (maximum is not None and value > maximum):
        raise bad_request(f"parameter {name!r} must be between {minimum} and {maximum}")
    return value


def choice(args, name, choices, default):
    value = args.get(name) or default
    if value not in choices:
        raise bad_request(f"parameter {name!r} must be one of {', '.join(choices)}")
    return value


def text(args, name, max_chars):
    value = args.get(name) or ""
    if len(value) > max_chars or "\x00" in value:
        raise bad_request(f"parameter {name!r} must be at most {max_chars} characters of text")
    return value
