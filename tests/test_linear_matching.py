"""No backtracking regex over trace strings (issue 28): every pattern the package compiles or applies is checked
for a shape Python's engine runs in linear time, and timed on adversarial names made of its own fragments; the
name classifiers are timed on long names of repeated fragments."""

import ast
import importlib
import re
import time
from pathlib import Path
from re import _constants as sre
from re import _parser as sre_parse

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tb_gpu_advisor"
_CALLS = ("compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer")
_SINGLE = {sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY, sre.CATEGORY}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}
_ENDS = {sre.AT_END, sre.AT_END_STRING}

# Patterns over the package's own files, never over a trace: (module, name or line) -> why.
NOT_TRACE_STRINGS = {
    ("report.tab_colors", "_ROOT"): "the tab's own CSS",
    ("report.tab_colors", "_VARIABLE"): "the tab's own CSS",
    ("report.tab_colors", "_RULE"): "the tab's own CSS",
    ("report.tab_colors", "_FILL"): "the tab's own CSS",
    ("plugin.fonts", "_STYLE"): "the tab's own HTML",
    ("plugin.fonts", "_FONT_URL"): "the tab's own HTML",
    ("plugin.fonts", "_FACE"): "the tab's own HTML",
    ("plugin.fonts", "url\\(([^)]*)\\)"): "the tab's own HTML",
    ("testing.stalling_jobs", "(a+)+b"): "backtracks on purpose: the job that stalls a worker in the isolation tests",
}
# Calls whose pattern is not a literal: (module, source text of the call) -> why it is linear.
COMPUTED_PATTERNS = {
    ("report.safe_text", "re.split(f'([{re.escape(keep)}])', text)"): "one character class, no repeat",
    (
        "readers.kineto.gpu_specs",
        "re.search(pattern, model_name, re.IGNORECASE)",
    ): "the published-spec table (checked below) over a device name cut to MAX_DEVICE_NAME_CHARS when read",
    (
        "analysis.peaks",
        "re.search(pattern, name)",
    ): "the peaks table (checked below) over a device name cut to MAX_DEVICE_NAME_CHARS when read",
}
# Patterns of a shape the check cannot prove linear, reviewed (and timed below): (module, name) -> why.
REVIEWED = {
    ("model.waits", "_KINETO"): "the second \\S+ is reached only past ': ', whose space the first cannot cross",
    ("readers.kineto.python_calls", "_SOURCE"): "the second class is reached only past '(', which the first excludes",
}
# Tables of pattern strings applied to a device model name (bounded length, so any shape is fast).
BOUNDED_INPUT_TABLES = (("readers.kineto.gpu_specs", "_TABLE"), ("analysis.peaks", "_BY_NAME"))


def _items(parsed):
    """(op, argument, the items after it in its sequence, then the parents' items after the group)."""

    def visit(items, after):
        items = list(items)
        for position, (op, av) in enumerate(items):
            following = items[position + 1 :] + after
            yield op, av, following
            if op in _REPEATS:
                yield from visit(av[2], [])
            elif op == sre.SUBPATTERN:
                yield from visit(av[3], following)
            elif op == sre.BRANCH:
                for branch in av[1]:
                    yield from visit(branch, following)
            elif op in (sre.ASSERT, sre.ASSERT_NOT):
                yield from visit(av[1], [])

    return visit(parsed, [])


def _first_literal(items):
    items = list(items)
    while items and items[0][0] == sre.SUBPATTERN:
        items = list(items[0][1][3])
    return items[0][1] if items and items[0][0] == sre.LITERAL else None


def _matches_char(body, flags, code):
    pattern = sre_parse.SubPattern(sre_parse.State(), [body])
    pattern.state.flags = flags
    return re._compiler.compile(pattern, flags).fullmatch(chr(code)) is not None


def _unbounded(items):
    return [(op, av, after) for op, av, after in _items(items) if op in _REPEATS and av[1] == sre.MAXREPEAT]


def _stops_once(body, flags, after):
    """True when a repeat of `body` followed by `after` cannot backtrack into a second try of what follows: the
    next item is the end, or literals (in every branch) that the repeated character cannot be, or no repeat."""
    if not after:
        return True
    op, av = after[0]
    if op == sre.AT and av in _ENDS:
        return True
    if op == sre.LITERAL:
        return not _matches_char(body, flags, av)
    if op == sre.SUBPATTERN:
        return _stops_once(body, flags, list(av[3]) + after[1:])
    if op == sre.BRANCH:
        return all(_stops_once(body, flags, list(branch) + after[1:]) for branch in av[1])
    return False


def _scans_apart(items, flags):
    """True when `items` begin with a literal no unbounded repeat among them matches: tried from many positions,
    their scans do not overlap (each stops at the next such literal)."""
    first = _first_literal(items)
    return first is not None and not any(
        len(av[2]) == 1 and _matches_char(av[2][0], flags, first) for _, av, _ in _unbounded(items)
    )


def shape_problems(pattern, flags=0, anchored=False):
    """Why `pattern` could backtrack more than linearly, or []: every unbounded repeat is of one character
    (R1); a repeat that may backtrack is followed by the end or by a literal it cannot match, or by nothing that
    repeats (R2); and a search not anchored at the start begins each branch with a literal that no unbounded
    repeat before the pattern's end matches, so the scans from different starting points do not overlap (R3)."""
    parsed = sre_parse.parse(pattern, flags)
    flags = parsed.state.flags
    found = []
    unbounded = _unbounded(parsed)
    for op, av, after in unbounded:
        body = list(av[2])
        if len(body) != 1 or body[0][0] not in _SINGLE:
            found.append("R1: unbounded repeat of more than one character")
        elif (
            op != sre.POSSESSIVE_REPEAT
            and not _stops_once(body[0], flags, after)
            and _unbounded(after)
            and not _scans_apart(after, flags)
        ):
            found.append("R2: a repeat that can backtrack into a continuation that repeats")
    starts_anchored = anchored or (
        parsed
        and parsed[0][0] == sre.AT
        and parsed[0][1] in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING)
        and not flags & re.MULTILINE
    )
    if unbounded and not starts_anchored:
        branches = parsed[0][1][1] if len(parsed) == 1 and parsed[0][0] == sre.BRANCH else [parsed]
        for branch in branches:
            scanning = [av for _, av, after in _unbounded(branch) if after and len(av[2]) == 1]
            if not scanning:
                continue
            first = _first_literal(branch)
            if first is None or any(_matches_char(av[2][0], flags, first) for av in scanning):
                found.append("R3: an unanchored branch with an unbounded repeat that scans across its starts")
    return found


def _module_names():
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if re.search(r"^\s*import re\b", source, re.MULTILINE):
            yield ".".join(path.relative_to(PACKAGE).with_suffix("").parts), source


def _compiled(value, depth=0):
    if isinstance(value, re.Pattern):
        yield value
    elif depth < 2 and isinstance(value, (tuple, list)):
        for item in value:
            yield from _compiled(item, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for item in value.values():
            yield from _compiled(item, depth + 1)


def package_patterns():
    """[(module, name, pattern string, flags, anchored)] of every regex the package compiles at module level or
    applies with a literal pattern, and [(module, call source)] of calls whose pattern is computed."""
    patterns, computed = [], []
    for module_name, source in _module_names():
        module = importlib.import_module(f"tb_gpu_advisor.{module_name}")
        for name, value in vars(module).items():
            for compiled in _compiled(value):
                patterns.append((module_name, name, compiled.pattern, compiled.flags, False))
        for node in ast.walk(ast.parse(source)):
            if (
                not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "re"
                    and node.func.attr in _CALLS
                    and node.args
                )
                or node.func.attr == "compile"
            ):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                patterns.append((module_name, first.value, first.value, 0, node.func.attr in ("match", "fullmatch")))
            else:
                computed.append((module_name, ast.unparse(node)))
    return patterns, computed


PATTERNS, COMPUTED = package_patterns()
TRACE_PATTERNS = [p for p in PATTERNS if (p[0], p[1]) not in NOT_TRACE_STRINGS]


def test_the_scan_finds_the_package_patterns():
    names = {(module, name) for module, name, *_ in PATTERNS}
    assert ("analysis.kernel_names", "_LOW_PRECISION") in names and ("analysis.capture_facts", "_DROPPED") in names
    assert len(TRACE_PATTERNS) > 80


def test_the_shape_check_tells_backtracking_patterns():
    for bad in (r"gemm.*f32", r"buffer.*full", r"(a+)+b", r"(a|ab)*c", r"^.*a.*b", r"^\S+\S+x", r"x\w*\d"):
        assert shape_problems(bad), bad
    for good in (
        r"drop|lost|overflow",
        r"^ProfilerStep#(\d+)$",
        r"/job:[A-Za-z_]\w*/",
        r"\((\d+)\)$",
        r"_tensor\d+x\d+x\d+",
        r"^EagerLocalExecute: (.+)_(\d+)$",
        r"TensorAssignOp<([\w:]+)",
    ):
        assert not shape_problems(good), good


@pytest.mark.parametrize("module, name, pattern, flags, anchored", TRACE_PATTERNS, ids=lambda v: str(v)[:40])
def test_every_pattern_over_trace_strings_has_a_linear_shape(module, name, pattern, flags, anchored):
    if (module, name) in REVIEWED:
        assert shape_problems(pattern, flags, anchored), f"{module}.{name} passes now: drop it from REVIEWED"
        return
    assert shape_problems(pattern, flags, anchored) == [], f"{module}.{name}: {pattern!r}"


def test_every_computed_pattern_is_reviewed():
    assert {(module, call) for module, call in COMPUTED} <= set(COMPUTED_PATTERNS), COMPUTED


def _fragments(pattern):
    """Words and punctuation of a pattern's source: what an attacker repeats to make it backtrack."""
    words = set(re.findall(r"[A-Za-z0-9_]{2,}", pattern)) | {"1", "a", " ", "(", ".", "_", ":", "/", "x", "\n"}
    return sorted(words, key=lambda w: (-len(w), w))[:24]


def _adversarial(pattern, length):
    leading = re.match(r"\^?((?:\\.|[^\\()\[\]|*+?{^$.])*)", pattern).group(1).replace("\\", "")
    for fragment in _fragments(pattern):
        repeated = (fragment * (length // len(fragment) + 1))[:length]
        yield repeated + "\x00"
        yield leading + repeated + "!"
        yield ((fragment + "1") * (length // (len(fragment) + 1) + 1))[:length] + "\x00"


def best_of_three_s(function, *args):
    """The least of three timings (the first when it is already fast): a busy machine only adds time."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - start)
        if best < SLOW_S / 10:
            break
    return best


def _slowest_s(compiled, texts, anchored=False):
    applies = (compiled.match,) if anchored else (compiled.search, compiled.match)
    return max(best_of_three_s(apply, text) for text in texts for apply in applies)


ADVERSARIAL_CHARS = 50_000
SLOW_S = 0.25  # a linear pattern takes milliseconds on 50,000 characters; a quadratic one, seconds


@pytest.mark.parametrize("module, name, pattern, flags, anchored", TRACE_PATTERNS, ids=lambda v: str(v)[:40])
def test_every_pattern_over_trace_strings_is_fast_on_adversarial_names(module, name, pattern, flags, anchored):
    """50,000-character names of the pattern's own fragments, repeated: a quadratic pattern takes seconds."""
    slowest = _slowest_s(re.compile(pattern, flags), _adversarial(pattern, ADVERSARIAL_CHARS), anchored)
    assert slowest < SLOW_S, f"{module}.{name} took {slowest:.3f} s on one name"


def test_the_timing_catches_backtracking_patterns():
    for bad in (r"gemm.*f32", r"buffer.*full", r"^\w*HashTable\w*$"):
        compiled = re.compile(bad)
        # Twice the length the patterns are timed on: a quadratic pattern then takes 4x as long, so the
        # check holds on a machine fast enough to run the quadratic one under SLOW_S at the usual length.
        text = next(_adversarial(bad, 2 * ADVERSARIAL_CHARS))  # the longest fragment repeated
        start = time.perf_counter()
        compiled.search(text)
        assert time.perf_counter() - start > SLOW_S, bad


@pytest.mark.parametrize("module, table", BOUNDED_INPUT_TABLES)
def test_device_name_tables_are_fast_on_the_longest_name_read(module, table):
    from tb_gpu_advisor.constants import MAX_DEVICE_NAME_CHARS

    rows = getattr(importlib.import_module(f"tb_gpu_advisor.{module}"), table)
    for pattern in (row[0] for row in rows):
        slowest = _slowest_s(re.compile(pattern, re.IGNORECASE), _adversarial(pattern, MAX_DEVICE_NAME_CHARS))
        assert slowest < SLOW_S / 10, pattern


def _name_classifiers():
    from tb_gpu_advisor.analysis import kernel_names, op_types, step_ops
    from tb_gpu_advisor.comparison.matching import is_fused_kernel
    from tb_gpu_advisor.readers.kineto.collectives import collective_from_kernel_name, is_collective_kernel
    from tb_gpu_advisor.readers.kineto.python_calls import python_call_name
    from tb_gpu_advisor.model import copies, host, vendor, waits

    return {
        "uses_tensor_cores": kernel_names.uses_tensor_cores,
        "uses_matrix_units(AMD)": lambda n: kernel_names.uses_matrix_units(n, vendor.AMD),
        "is_low_precision": kernel_names.is_low_precision,
        "kernel_precision": kernel_names.kernel_precision,
        "is_fp32_matmul": kernel_names.is_fp32_matmul,
        "is_tensor_core_eligible": lambda n: kernel_names.is_tensor_core_eligible(n, n),
        "kernel_class": kernel_names.kernel_class,
        "without_parameters": kernel_names.without_parameters,
        "is_library_math": kernel_names.is_library_math,
        "is_runtime_copy": kernel_names.is_runtime_copy,
        "collective_dtype": lambda n: kernel_names.collective_dtype(n, n),
        "collective_kind": lambda n: kernel_names.collective_kind(n, n),
        "op_type": lambda n: op_types.op_type(n, n),
        "is_producer_event": step_ops.is_producer_event,
        "is_xla_incompatible": step_ops.is_xla_incompatible,
        "spelled_copy_direction": copies.spelled_copy_direction,
        "call_role": waits.call_role,
        "event_tag": host.event_tag,
        "thread_kind": host.thread_kind,
        "amd_arch": lambda n: vendor.amd_arch([n], [n]),
        "is_collective_kernel": is_collective_kernel,
        "collective_from_kernel_name": collective_from_kernel_name,
        "python_call_name": python_call_name,
        "is_fused_kernel": is_fused_kernel,
    }


CLASSIFIER_NAMES = [
    "gemm" * 25_000 + "x",
    "buffer" * 16_700,
    "_MI16" * 20_000,
    "Cijk_" + "_MI1x" * 20_000 + "y",
    "hgemm" * 20_000,
    "f32" * 33_000 + "gemm",
    "sm80_xmma_" * 10_000,
    "HashTable" * 11_000 + "!",
    "Parse" * 20_000 + "!",
    "(1): " * 25_000,
    "$a.py:1 " * 12_500,
    "<built-in method " * 6_000,
    "EagerLocalExecute: __inference_" * 3_300 + "\x00",
    "jit_" + "1" * 100_000 + "(",
    "TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<" * 2_200 + "!",
    "/job:" + "a" * 100_000,
    "\ud800" * 100_000,
    "\u202e" * 100_000,
]


# Linear, a classifier takes well under a second on a 100,000-character name (real names stay under 6,000; the
# slowest, op_type, tries some 200 alternatives at each character); quadratic, it would take minutes.
SLOW_CLASSIFIER_S = 2.0


@pytest.mark.parametrize("classifier", sorted(_name_classifiers()))
def test_every_name_classifier_is_fast_on_100k_character_names(classifier):
    function = _name_classifiers()[classifier]
    slowest = max(best_of_three_s(function, name) for name in CLASSIFIER_NAMES)
    assert slowest < SLOW_CLASSIFIER_S, f"{classifier} took {slowest:.3f} s on one name"
