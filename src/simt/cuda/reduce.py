"""numba's ``cuda.reduce`` / ``cuda.Reduce``: a reduction over a 1-d array with a binary
device function, ``sum_reduce = cuda.reduce(lambda a, b: a + b)``, then
``sum_reduce(arr, size=None, res=None, init=0, stream=0)``.

Two launches: threads fold chunks of the array with the function, then one thread folds
the partial results, starting from ``init`` (numba folds ``init`` in the same way), so the
function must be associative, as numba asks. A lambda is compiled from its source line:
it may read globals, not the enclosing function's locals."""
import ast
import inspect
import itertools
import linecache
import textwrap

import numpy as np

from ..errors import NotSupportedError
from ..lang import grid
from ..runtime.kernel import DeviceFunction, kernel

THREADS = 256
_lambdas = itertools.count()


@kernel
def _fold_chunks(fn, arr, out, n, chunk):
    i = grid(1)
    start = i * chunk
    if start < n:
        acc = arr[start]
        for j in range(start + 1, min(start + chunk, n)):
            acc = fn(acc, arr[j])
        out[i] = acc


@kernel
def _fold_all(fn, parts, out, count):
    if grid(1) == 0:
        acc = out[0]                 # init
        for j in range(count):
            acc = fn(acc, parts[j])
        out[0] = acc


class Reduce:
    """A reduction with binary function ``functor`` (a def, a lambda, or a device
    function)."""

    def __init__(self, functor):
        self._functor = functor
        self._device = functor if isinstance(functor, DeviceFunction) else \
            DeviceFunction(_as_def(functor))

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        from .arrays import to_device, device_array
        host = not hasattr(arr, "copy_to_host")
        if size is not None:
            arr = arr[:size]
        n = len(arr)
        dtype = np.dtype(arr.dtype)
        if n == 0:
            value = dtype.type(init)
        else:
            d_arr = to_device(np.ascontiguousarray(arr)) if host else arr
            chunk = max(1, -(-n // (THREADS * 64)))
            count = -(-n // chunk)
            parts = device_array(count, dtype)
            out = to_device(np.array([init], dtype))
            s = stream or None
            _fold_chunks[-(-count // THREADS), THREADS, 0, s](self._device, d_arr, parts, n,
                                                               chunk)
            _fold_all[1, 1, 0, s](self._device, parts, out, count)
            if res is not None:
                res[:1] = out[:1] if hasattr(res, "copy_to_host") else out.copy_to_host()
                return None
            value = out.copy_to_host()[0]
        if res is not None:
            res[0] = value
            return None
        return value


reduce = Reduce


def _as_def(fn):
    """``fn`` itself, or for a lambda a def made from its source (kept in linecache, where
    simt reads sources from)."""
    if getattr(fn, "__name__", "") != "<lambda>":
        return fn
    try:
        text = textwrap.dedent("".join(inspect.getsourcelines(fn)[0]))
    except (OSError, TypeError):
        raise NotSupportedError("cuda.reduce of a lambda whose source Python did not keep: "
                                "write the function with def") from None
    params = [a for a in fn.__code__.co_varnames[:fn.__code__.co_argcount]]
    try:
        tree = ast.parse(text)
    except SyntaxError:                # a lambda inside a call split over lines
        tree = None
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda) and
             [a.arg for a in node.args.args] == params] if tree is not None else []
    if len(found) != 1 or fn.__code__.co_freevars:
        raise NotSupportedError("cuda.reduce of this lambda: simt finds no single lambda "
                                f"({', '.join(params)}) reading only globals on its source "
                                "line; write the function with def")
    name = f"_reduce_lambda_{next(_lambdas)}"
    source = f"def {name}({', '.join(params)}):\n    return {ast.unparse(found[0].body)}\n"
    filename = f"<simt.cuda.reduce {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), fn.__globals__, namespace)
    return namespace[name]
