"""Write src/simt/__init__.pyi: what type checkers (mypy, pyright) see of ``import simt``.

simt/__init__.py loads its public names at their first use (PEP 562), which a type checker
cannot follow: without a stub every name is Any to mypy and a wrong type to pyright. The
stub names each public name from its home module (simt/__init__.py's _HOMES), so its type
is the one written there; kernel-language values are typed as kernel code reads them
(``threadIdx.x`` is an int); names made from tables (``simt.float4``, ``simt.hadd``) and
the namespaces (``simt.atomic``) are declared. tests/test_typing.py fails when the stub
differs from what this writes: run ``python tools/gen_stub.py`` after adding a name.
"""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
STUB = os.path.join(ROOT, "src", "simt", "__init__.pyi")
sys.path.insert(0, os.path.join(ROOT, "src"))

import simt                                                   # noqa: E402
from simt.lang.indices import Dim3Special                     # noqa: E402
from simt.lang.registry import Intrinsic, Namespace           # noqa: E402

# host types whose class depends on ml_dtypes being installed: typed as some type
DTYPES = ("bfloat16", "float8_e4m3", "float8_e5m2")
# how the stub declares a name of each kind (_kind) that is not re-exported
DECLARED = {"dim3": "_Dim3", "value": "int", "dtype": "type[Any]   # ml_dtypes' where installed"}

HEADER = '''"""What type checkers see of ``import simt``: written by tools/gen_stub.py from
simt/__init__.py's tables (run it after adding a public name; tests/test_typing.py checks).

Host names come from their home modules. Kernel-language names are typed as kernel code
reads them: ``threadIdx.x`` is an int; an intrinsic is a function whose result the
compiler types (Any here)."""
from typing import Any

import numpy as np

from . import errors as errors, gl as gl, version as version
from .version import __version__ as __version__
from .lang.registry import Intrinsic as _Intrinsic
from .lang.vectors import VectorValue as _VectorValue


class _Dim3:
    """threadIdx, blockIdx, blockDim, gridDim as kernel code reads them."""
    x: int
    y: int
    z: int


class _Vector(_VectorValue):
    """A vector type (simt.float4, ...): its components, its arrays' dtype, and in
    kernels the helper_math arithmetic."""
    dtype: np.dtype[Any]
    x: Any
    y: Any
    z: Any
    w: Any
    def __add__(self, other: Any) -> Any: ...
    def __radd__(self, other: Any) -> Any: ...
    def __sub__(self, other: Any) -> Any: ...
    def __rsub__(self, other: Any) -> Any: ...
    def __mul__(self, other: Any) -> Any: ...
    def __rmul__(self, other: Any) -> Any: ...
    def __truediv__(self, other: Any) -> Any: ...
    def __rtruediv__(self, other: Any) -> Any: ...
    def __neg__(self) -> Any: ...
'''


def _wrapped(head, items):
    """``head`` then the items, comma-separated in parentheses, wrapped at 100 columns
    without splitting an item."""
    if len(items) == 1:
        return head + items[0]
    lines, line = [], head + "("
    for i, item in enumerate(items):
        text = item + (")" if i == len(items) - 1 else ",")
        if len(line) + 1 + len(text) > 100 and not line.endswith("("):
            lines.append(line)
            line = " " * (len(head) + 1) + text
        else:
            line += ("" if line.endswith("(") else " ") + text
    return "\n".join(lines + [line])


def _class_name(name):
    return "_" + name[0].upper() + name[1:]


def _namespace(name, value):
    members = sorted(k for k, v in vars(value).items() if isinstance(v, Intrinsic))
    lines = [f"class {_class_name(name)}:", f'    """{value.__doc__}"""']
    lines += [f"    {member}: _Intrinsic" for member in members]
    return "\n".join(lines) + "\n"


def _kind(name, value):
    """How the stub gives a name: 'dim3', 'value', 'namespace', 'dtype', 'home'."""
    if isinstance(value, Dim3Special):
        return "dim3"
    if isinstance(value, Intrinsic) and value.value:
        return "value"
    if isinstance(value, Namespace):
        return "namespace"
    if name in DTYPES:
        return "dtype"
    return "home"


def render():
    homes, declared, classes = {}, [], []
    for name, (module, attribute) in simt._HOMES.items():
        value = getattr(simt, name) if name not in DTYPES else None
        kind = _kind(name, value)
        if kind == "home":
            homes.setdefault(module, []).append(f"{attribute} as {name}")
        elif kind == "namespace":
            classes.append(_namespace(name, value))
            declared.append(f"{name}: {_class_name(name)}")
        else:
            declared.append(f"{name}: {DECLARED[kind]}")
    table = simt._tables()
    made = [f"{name}: type[_Vector]" if isinstance(value, type) else f"{name}: _Intrinsic"
            for name, value in table.items()]
    errors = sorted(n for n, v in vars(simt).items()
                    if isinstance(v, type) and v.__module__ == "simt.errors")
    parts = [HEADER, _wrapped("from .errors import ", [f"{n} as {n}" for n in errors]), ""]
    parts += [_wrapped(f"from .{module} import ", names) for module, names in homes.items()]
    parts += ["", "", "\n\n".join(classes), "", "# kernel-language values and namespaces"]
    parts += declared
    parts += ["", "# made from tables: the vector types, their make_* and cuda_fp16/cuda_bf16's"]
    parts += made
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    with open(STUB, "w") as f:
        f.write(render())
    print(f"wrote {os.path.relpath(STUB, ROOT)}")
