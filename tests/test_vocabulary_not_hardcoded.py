"""The tab names a breakdown category or an idle cause only through static/vocabulary.js: a string literal in
static/**/*.js equal to one of those labels is a copy that drifts from the CLI and the HTML report (the
timeline once said "Host waiting for input" where the CLI says "Input wait")."""

from pathlib import Path

from tb_gpu_advisor import vocabulary

STATIC = Path(vocabulary.JS_PATH).parent
QUOTES = "'\"`"


def _skip_regex(text, start):
    """The index after a regex literal starting at `start` (a '/'), classes and escapes included."""
    i, in_class = start + 1, False
    while i < len(text) and text[i] != "\n":
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            return i + 1
        i += 1
    return i


def string_literals(text):
    """(line, value) of each string literal of a JS source, comments and regex literals left out; a template
    literal counts when it has no ${...} (its text then is its value)."""
    found, i, last = [], 0, ""
    while i < len(text):
        char, pair = text[i], text[i : i + 2]
        if pair == "//":
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
        elif pair == "/*":
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
        elif char == "/" and (not last or last in "(,=:[!&|?{};+-*%<>~^"):
            i = _skip_regex(text, i)
            last = "/"
        elif char in QUOTES:
            start, i, parts = i, i + 1, []
            while i < len(text) and text[i] != char:
                if text[i] == "\\":
                    parts.append(text[i : i + 2])
                    i += 2
                    continue
                parts.append(text[i])
                i += 1
            value = "".join(parts)
            if char != "`" or "${" not in value:
                found.append((text.count("\n", 0, start) + 1, value))
            i += 1
            last = char
        else:
            if not char.isspace():
                last = char
            i += 1
    return found


def _labels():
    exported = vocabulary.exported()
    return set(exported["breakdown"].values()) | set(exported["idleCause"].values())


def test_the_scanner_sees_literals_not_comments_or_regexes():
    source = (
        "// 'Idle' in a comment\n/* \"Input wait\" */ const a = 'Idle', b = \"Input wait\", c = `Copy call`;\n"
        "const d = `${x} Idle`; const r = /'[\"]/g; const e = 'it\\'s';\n"
    )
    assert string_literals(source) == [(2, "Idle"), (2, "Input wait"), (2, "Copy call"), (3, "it\\'s")]


def test_no_view_hard_codes_a_category_or_idle_cause_label():
    labels = _labels()
    assert {"Idle", "Input wait", "Kernel launch"} <= labels
    hard_coded = [
        f"{path.relative_to(STATIC)}:{line}: {value!r}"
        for path in sorted(STATIC.rglob("*.js"))
        if path.name != "vocabulary.js"
        for line, value in string_literals(path.read_text(encoding="utf-8"))
        if value in labels
    ]
    assert hard_coded == [], "use VOCABULARY.breakdown / VOCABULARY.idleCause (static/vocabulary.js) instead"
