"""The layering of src/simt, from its import graph (module-level and function-level
imports alike, read with ast): no import cycles; back ends do not import each other;
the runtime imports no back end (it finds them by name); back ends reach the runtime
only through its contract, runtime/backend.py; nothing below the face imports it."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

# A cycle being removed on some branch can be allowed here by name while it is; none is now.
KNOWN_CYCLES = {}       # name -> modules of the cycle


def modules(src=SRC):
    """{dotted name: path} of every module under src/simt (packages by their own name)."""
    found = {}
    for path in sorted((src / "simt").rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _targets(name, path, node, known):
    """The simt modules an import statement names. ``from pkg import sub`` imports the
    package (its __init__ runs) as well as ``pkg.sub``."""
    if isinstance(node, ast.Import):
        named = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".")
            if path.name != "__init__.py":
                base = base[:-1]
            base = base[:len(base) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module
        named = [module] + [f"{module}.{alias.name}" for alias in node.names
                            if f"{module}.{alias.name}" in known]
    out = set()
    for target in named:
        while target and target not in known:        # `import simt.x.y` names a module or a package
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)
    return out


def import_graph(src=SRC):
    """{module: set of simt modules it imports anywhere in its body}."""
    known = modules(src)
    graph = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name] |= _targets(name, path, node, known)
            elif _is_lazy_import(node):          # lazy_module("simt.x"): an import too
                graph[name] |= _targets(name, path, ast.Import([ast.alias(node.args[0].value)]),
                                        known)
    return graph


def _is_lazy_import(node):
    return (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_module"
            and node.args and isinstance(node.args[0], ast.Constant))


def strong_components(graph):
    """The sets of two or more modules that import each other, directly or around a loop."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(start):
        # Tarjan's algorithm, iterative (the graph is deep enough to worry the recursion limit)
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def a_cycle(graph, component):
    """One loop through a strongly connected set, as 'a -> b -> ... -> a'."""
    start = min(component)
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for nxt in sorted(graph[path[-1]] & component):
            if nxt == start:
                return " -> ".join(path + [start])
            if nxt not in seen:
                seen.add(nxt)
                paths.append(path + [nxt])
    return ", ".join(sorted(component))


def _known(component):
    return next((name for name, members in KNOWN_CYCLES.items() if component <= members), None)


def _arrows(graph, source, target):
    """'a -> b' for each import from a module under ``source`` of one under ``target``."""
    return [f"{a} -> {b}" for a, bs in sorted(graph.items()) if source(a)
            for b in sorted(bs) if target(b)]


def _backend_folder(module):
    """The back end a module belongs to ('cpu', 'cuda', ...), or None (hostjit, the
    package itself and everything outside simt.backends)."""
    parts = module.split(".")
    if parts[:2] == ["simt", "backends"] and len(parts) > 2 and \
            (SRC / "simt" / "backends" / parts[2]).is_dir():
        return parts[2]
    return None


GRAPH = import_graph()


def test_graph_sees_function_level_and_package_imports(tmp_path):
    package = tmp_path / "simt"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("def f():\n    from . import b\n")
    (package / "sub" / "b.py").write_text("from simt.sub.a import f\n")
    (package / "sub" / "c.py").write_text("c = lazy_module('simt.sub.b')\n")
    graph = import_graph(tmp_path)
    assert graph["simt.sub.a"] == {"simt.sub", "simt.sub.b"}
    assert graph["simt.sub.c"] == {"simt.sub.b"}
    cycles = strong_components(graph)
    assert cycles == [{"simt.sub.a", "simt.sub.b"}]
    assert a_cycle(graph, cycles[0]) == "simt.sub.a -> simt.sub.b -> simt.sub.a"


def test_no_import_cycles():
    cycles = [c for c in strong_components(GRAPH) if _known(c) is None]
    assert not cycles, "import cycles in src/simt:\n" + "\n".join(
        "  " + a_cycle(GRAPH, c) for c in cycles)


def test_known_cycles_are_gone():
    left = [f"{_known(c)}: {a_cycle(GRAPH, c)}" for c in strong_components(GRAPH) if _known(c)]
    assert not left, "\n".join(left)


def _between_backends(graph):
    return [f"{a} -> {b}" for a, bs in sorted(graph.items()) for b in sorted(bs)
            if _backend_folder(a) and _backend_folder(b)
            and _backend_folder(a) != _backend_folder(b)]


def test_backends_do_not_import_each_other():
    assert _between_backends({"simt.backends.cuda.kernels": {"simt.backends.cpu.device",
                                                             "simt.backends.hostjit"}}) == \
        ["simt.backends.cuda.kernels -> simt.backends.cpu.device"]
    arrows = _between_backends(GRAPH)
    assert not arrows, "a back end imports another (share code below both, as " \
        "backends/hostjit.py and simt/fault.py do):\n  " + "\n  ".join(arrows)


def test_runtime_imports_no_backend():
    arrows = _arrows(GRAPH, lambda m: m.startswith("simt.runtime"),
                     lambda m: m.startswith("simt.backends"))
    assert not arrows, "the runtime imports a back end (find it by name in " \
        "runtime/devices.py BACKENDS, and call it through runtime/backend.py):\n  " + \
        "\n  ".join(arrows)


def test_backends_reach_the_runtime_only_through_its_contract():
    arrows = _arrows(GRAPH, lambda m: m.startswith("simt.backends"),
                     lambda m: m.startswith("simt.runtime") and m != "simt.runtime.backend")
    assert not arrows, "a back end imports runtime internals (move what it needs into " \
        "runtime/backend.py, or have the runtime pass it in):\n  " + "\n  ".join(arrows)


def test_nothing_below_the_face_imports_it():
    below = ("simt.runtime", "simt.backends", "simt.compiler", "simt.lang", "simt.ir",
             "simt.errors", "simt.fault", "simt.config", "simt.version", "simt.logs")
    arrows = _arrows(GRAPH, lambda m: m.startswith(below), lambda m: m == "simt")
    assert not arrows, "imports of the simt package (the face) from below it:\n  " + \
        "\n  ".join(arrows)


def test_every_backend_in_the_table_is_a_folder_here():
    from simt.runtime.devices import BACKENDS
    for kind, where in BACKENDS.items():
        module = where.partition(":")[0]
        assert module in GRAPH and _backend_folder(module) == kind, (kind, where)


def test_disk_cache_key_covers_what_compiles():
    """Every module the compile hooks and the front end reach is hashed into the disk
    cache's key (a changed pass must not load binaries an older one made)."""
    import simt
    from simt.runtime.cache import hashed_sources
    # simt may be installed elsewhere than this tree (CI installs it): compare paths
    # relative to each package's folder.
    installed = Path(simt.__file__).resolve().parent
    hashed = {str(Path(p).resolve().relative_to(installed)) for p in hashed_sources()}
    paths = modules()
    todo = ["simt.backends.cpu.compile", "simt.backends.cuda.compile", "simt.compiler.frontend"]
    reached = set()
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo += GRAPH[module]
    missing = sorted(m for m in reached
                     if str(paths[m].resolve().relative_to(SRC / "simt")) not in hashed)
    assert not missing, f"modules compiling reaches that the cache key does not hash: {missing}"


def _code_strings(path):
    """The string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text())
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docs]


@pytest.mark.parametrize("layer", ["ir", "lang", "compiler"])
def test_no_layer_above_the_backends_names_a_device(layer):
    """A device's lowerings, reasons and facts live in its folder (backends/<device>/):
    the layers above never name one as a value (lowering("cuda"), target.name == "cpu",
    unsupported={"sim": ...})."""
    from simt.runtime.devices import BACKENDS
    for path in sorted((SRC / "simt" / layer).rglob("*.py")):
        named = [s for s in _code_strings(path) if s in BACKENDS]
        assert not named, f"{path.relative_to(SRC)} names {named}"
