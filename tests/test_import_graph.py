"""The package's import graph, counting imports inside functions too, has no cycles: neither among its modules nor
among its top-level packages (files, readers, model, analysis, ...), so data flows one way between layers. Imports
only a type checker runs (under `if TYPE_CHECKING:`) count between packages but not between modules."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tb_gpu_advisor"


def module_files():
    """{dotted module name: path} of every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _statements(tree, with_type_imports):
    """Every node of the tree; without type imports, none under `if TYPE_CHECKING:`."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        if not with_type_imports and isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))


def imports_of(name, path, modules, with_type_imports=True):
    """The package modules `name` imports, wherever the import statement stands (module level or a function);
    without type imports, not those only a type checker runs."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in _statements(ast.parse(path.read_text(encoding="utf-8")), with_type_imports):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found.update(target for target in targets if target in modules and target != name)
    return found


def import_graph(with_type_imports=True):
    modules = module_files()
    return {name: imports_of(name, path, modules, with_type_imports) for name, path in modules.items()}


def package_graph(graph):
    """The import graph between the top-level units of the package: each subpackage (`readers`, `model`, ...)
    and each top-level module (`pipeline`, `cli`, ...) is one node; the package's own `__init__` (the public
    facade, importing the entry points) is left out."""

    def unit(name):
        return ".".join(name.split(".")[:2])

    found = {}
    for name, targets in graph.items():
        if name == PACKAGE.name:
            continue
        found.setdefault(unit(name), set()).update(unit(t) for t in targets if t != PACKAGE.name)
    return {name: targets - {name} for name, targets in found.items()}


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted; sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_checker_sees_a_cycle_made_by_a_function_level_import(tmp_path):
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from tb_gpu_advisor.errors import ProfileError\n")
    assert imports_of("tb_gpu_advisor.m", source, {"tb_gpu_advisor.errors"}) == {"tb_gpu_advisor.errors"}
    source.write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from tb_gpu_advisor import errors\n")
    assert imports_of("tb_gpu_advisor.m", source, {"tb_gpu_advisor.errors"}) == {"tb_gpu_advisor.errors"}
    assert imports_of("tb_gpu_advisor.m", source, {"tb_gpu_advisor.errors"}, with_type_imports=False) == set()


def test_the_package_graph_sees_a_cycle_between_packages_of_acyclic_modules():
    graph = {
        "tb_gpu_advisor": {"tb_gpu_advisor.a.x"},
        "tb_gpu_advisor.a.x": {"tb_gpu_advisor.b.y"},
        "tb_gpu_advisor.b.y": set(),
        "tb_gpu_advisor.b.z": {"tb_gpu_advisor.a.w"},
        "tb_gpu_advisor.a.w": set(),
        "tb_gpu_advisor.c": {"tb_gpu_advisor"},
    }
    assert cycles(graph) == []
    assert package_graph(graph) == {
        "tb_gpu_advisor.a": {"tb_gpu_advisor.b"},
        "tb_gpu_advisor.b": {"tb_gpu_advisor.a"},
        "tb_gpu_advisor.c": set(),
    }
    assert cycles(package_graph(graph)) == [["tb_gpu_advisor.a", "tb_gpu_advisor.b"]]


def test_no_import_cycles_among_the_package_modules():
    assert cycles(import_graph(with_type_imports=False)) == []


def test_no_import_cycles_among_the_top_level_packages():
    assert cycles(package_graph(import_graph())) == []


if __name__ == "__main__":
    for component in cycles(import_graph(with_type_imports=False)) + cycles(package_graph(import_graph())):
        print(" <-> ".join(component))
