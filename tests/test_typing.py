"""The public API carries type hints (py.typed is shipped): the main entry points say
what they take and return, and the hints resolve. Type checkers see every public name
through src/simt/__init__.pyi (simt/__init__.py loads names lazily, which they cannot
follow): the stub names exactly the public names, each from its home module, and mypy and
pyright, where installed (the test extra has both), accept the README's code, the docs'
code and the example programs, and reject wrong code."""
import ast
import builtins
import importlib.util
import json
import os
import re
import subprocess
import sys
import symtable
import typing

import pytest

import simt

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
SRC = os.path.join(ROOT, "src")
STUB = os.path.join(SRC, "simt", "__init__.pyi")
EXAMPLES = os.path.join(SRC, "simt", "examples")
# pages whose code blocks are API listings in pseudo-syntax ('cuda:1' | 'cpu'), not code
LISTINGS = {"api-contract.md"}


def test_entry_points_have_resolvable_hints():
    for fn in (simt.to_device, simt.device_array, simt.zeros, simt.asarray, simt.from_dlpack,
               simt.get_device, simt.set_device, simt.devices, simt.synchronize):
        hints = typing.get_type_hints(fn)
        assert "return" in hints, fn.__name__
    assert typing.get_type_hints(simt.to_device)["return"] is simt.DeviceArray


def test_the_package_says_it_is_typed():
    import importlib.resources
    assert importlib.resources.files("simt").joinpath("py.typed").is_file()
    assert importlib.resources.files("simt").joinpath("__init__.pyi").is_file()


# ------------------------------------------------------------------ the stub
def _stub_names():
    """{name: (module, attribute) for a re-export, or None for a declaration} of the stub."""
    with open(STUB) as f:
        tree = ast.parse(f.read())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                names[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = None
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] = None
    return {n: home for n, home in names.items() if not n.startswith("_")}


def test_the_stub_names_every_public_name_and_no_other():
    fix = "; run python tools/gen_stub.py"
    stub = set(_stub_names()) - {"errors", "gl", "version"}    # submodules the stub names
    public = set(simt.__all__) | {"math"}                  # math: not in __all__ (stdlib's)
    assert not public - stub, f"public names missing from simt/__init__.pyi: " \
                              f"{sorted(public - stub)}{fix}"
    assert not stub - public, f"simt/__init__.pyi names what simt has not: " \
                              f"{sorted(stub - public)}{fix}"


def test_the_stub_takes_each_name_from_its_home():
    for name, home in _stub_names().items():
        if home is None or home[0] is None or name in ("errors", "gl", "version"):
            continue
        expected = ("errors", name) if home[0] == "errors" else simt._HOMES.get(name)
        assert home == expected, f"simt/__init__.pyi imports {name} from {home}, " \
                                 f"simt/__init__.py from {expected}"


def test_the_stub_is_what_gen_stub_writes():
    path = os.path.join(ROOT, "tools", "gen_stub.py")
    spec = importlib.util.spec_from_file_location("gen_stub", path)
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    with open(STUB) as f:
        assert f.read() == generator.render(), \
            "src/simt/__init__.pyi is out of date: run python tools/gen_stub.py"


# ------------------------------------------------------------------ the programs checked
def _code_blocks(path):
    with open(path) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def _bound(node):
    """Names a top-level statement binds (not those bound inside its functions)."""
    names = set()
    for child in _walk_outside_functions(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in child.names}
        elif isinstance(child, (ast.FunctionDef, ast.ClassDef)):
            names.add(child.name)
    return names


def _walk_outside_functions(node):
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for decorator in getattr(node, "decorator_list", []):
            yield from _walk_outside_functions(decorator)
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_outside_functions(child)


def _given_names(source):
    """Names a page's code reads but does not define before (a page shows fragments: the
    reader knows what ``a``, ``blocks`` or ``stream`` are): those the whole page never
    defines, and those it reads at the top level before the statement defining them."""
    table = symtable.symtable(source, "page", "exec")
    defined = {s.get_name() for s in table.get_symbols()
               if s.is_assigned() or s.is_imported() or s.is_namespace()}
    given = set()

    def never_defined(scope):
        for symbol in scope.get_symbols():
            if (scope is table or symbol.is_global()) and symbol.is_referenced() and \
                    symbol.get_name() not in defined:
                given.add(symbol.get_name())
        for child in scope.get_children():
            never_defined(child)
    never_defined(table)
    statements = ast.parse(source).body
    later = [_bound(s) for s in statements]
    seen = set()
    for i, statement in enumerate(statements):
        reads = {n.id for n in _walk_outside_functions(statement)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        bound_later = set().union(*later[i + 1:]) - seen - later[i]
        given |= reads & bound_later
        seen |= later[i]
    return sorted(n for n in given if not hasattr(builtins, n))


def _page_program(path):
    """A docs page's Python blocks as one program, read top to bottom as a reader does,
    with what the page leaves to the reader given as Any; None for a page without code."""
    blocks = []
    for block in _code_blocks(path):
        try:
            ast.parse(block)
        except SyntaxError:          # a block with elisions ("...") in mid-statement
            continue
        blocks.append(block)
    if not blocks:
        return None
    body = "\n".join(blocks)
    # pages show the maybe-unassigned variables simt warns about (docs/finding-bugs.md)
    head = "# pyright: reportPossiblyUnboundVariable=false\n" \
           "from typing import Any\nimport numpy as np\nimport simt\n\n\n" \
           "def _given() -> Any: ...\n\n\n"
    head += "".join(f"{name}: Any = _given()\n" for name in _given_names(head + body))
    return head + body


def _programs(folder):
    """The files to check: the README's code blocks, each docs page as one program
    (written into folder) and the example programs."""
    files = []
    for i, block in enumerate(_code_blocks(os.path.join(ROOT, "README.md"))):
        files.append(os.path.join(folder, f"readme_{i}.py"))
        with open(files[-1], "w") as f:
            f.write(block)
    docs = os.path.join(ROOT, "docs")
    for page in sorted(os.listdir(docs)):
        program = _page_program(os.path.join(docs, page)) if page.endswith(".md") and \
            page not in LISTINGS else None
        if program is not None:
            files.append(os.path.join(folder, "docs_" + page[:-3].replace("-", "_") + ".py"))
            with open(files[-1], "w") as f:
                f.write(program)
    files += sorted(os.path.join(EXAMPLES, n) for n in os.listdir(EXAMPLES)
                    if n.endswith(".py") and n != "__init__.py")
    return files


# Code that must fail: each line marked "# wrong" is an error to both checkers; the
# others (what the types are) must pass.
PROBE = '''\
from typing import Any, Callable
import numpy as np
import simt
from simt import threadIdx

@simt.kernel
def saxpy(a, x, y, out):
    i = simt.blockIdx.x * simt.blockDim.x + threadIdx.x
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]

@simt.kernel("void(float32[:])", launch_bounds=(256, 1))
def bounded(x):
    x[simt.grid(1)] = 0

@simt.device
def square(v: float) -> float:
    return v * v

host = np.zeros(4, np.float32)
d: simt.DeviceArray = simt.to_device(host)
back: np.ndarray = d.copy_to_host()
view: simt.DeviceArray = d[1:3]
launch: Callable[[Any, Any, Any, Any], None] = saxpy[4, 256]
launch_on: Callable[[Any], None] = bounded[(2, 2), (16, 16), 0, simt.Stream()]
size: int = d.size
index: int = threadIdx.x
saxpy[4, 256](np.float32(2), d, d)                      # wrong
saxpy[4](np.float32(2), d, d, d)                        # wrong
bounded[4, 256, 0, None, (2, 1), 5](d)                  # wrong
threadIdx.w                                             # wrong
text: str = threadIdx.x                                 # wrong
d.no_such_method()                                      # wrong
simt.no_such_name                                       # wrong
square("four")                                          # wrong
simt.device_array(4).copy_to_host().no_such_method()    # wrong
'''


def _wrong_lines():
    return {i for i, line in enumerate(PROBE.splitlines(), 1) if line.endswith("# wrong")}


def _mypy(files, folder):
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull,
         "--follow-imports=silent", "--ignore-missing-imports", "--disable-error-code",
         "no-redef", "--python-executable", sys.executable, *files],
        capture_output=True, text=True, cwd=folder, env={**os.environ, "MYPYPATH": SRC},
        timeout=600)
    errors = re.findall(r"^(.+?):(\d+): error: (.*)$", done.stdout, re.M)
    return [(os.path.abspath(os.path.join(folder, f)), int(n), text) for f, n, text in errors], \
        done.stdout + done.stderr


def _pyright(files, folder):
    config = os.path.join(folder, "pyrightconfig.json")
    with open(config, "w") as f:
        json.dump({"extraPaths": [SRC], "reportMissingImports": False,
                   "pythonVersion": f"{sys.version_info[0]}.{sys.version_info[1]}"}, f)
    done = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "--project", config,
                           "--pythonpath", sys.executable, *files],
                          capture_output=True, text=True, cwd=folder, timeout=600)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright did not run: {done.stdout}{done.stderr}")
    errors = [(os.path.abspath(d["file"]), d["range"]["start"]["line"] + 1, d["message"])
              for d in report["generalDiagnostics"] if d["severity"] == "error"]
    return errors, done.stdout


CHECKERS = {"mypy": _mypy, "pyright": _pyright}


@pytest.mark.parametrize("checker", sorted(CHECKERS))
def test_type_checkers_accept_the_docs_and_examples_and_reject_wrong_code(checker, tmp_path):
    if importlib.util.find_spec(checker) is None:
        pytest.skip(f"{checker} is not installed (pip install '.[test]' brings it)")
    files = _programs(str(tmp_path))
    probe = str(tmp_path / "probe.py")
    with open(probe, "w") as f:
        f.write(PROBE)
    errors, output = CHECKERS[checker](files + [probe], str(tmp_path))
    wrong = {line for path, line, _ in errors if path == probe}
    others = [f"{os.path.relpath(p, ROOT) if p.startswith(ROOT) else os.path.basename(p)}:{n}: "
              f"{text}" for p, n, text in errors if p != probe]
    assert not others, f"{checker} finds errors in correct code:\n" + "\n".join(others)
    assert wrong == _wrong_lines(), f"{checker} should reject exactly the lines marked wrong: " \
                                    f"missed {sorted(_wrong_lines() - wrong)}, refused " \
                                    f"{sorted(wrong - _wrong_lines())}\n{output[-4000:]}"
