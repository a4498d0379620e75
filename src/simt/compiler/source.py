"""Where a Python function's source, globals and closure come from, and what a kernel
may read from Python (docs/kernel-globals.md).

A function's global and closure names, and attributes reached from them (``cfg.N``,
``cfg.sq``), are read once per process: the value seen at the first read is frozen for
every later compile of that function (other signatures, other devices) and for the disk
cache's checks, so that one process never mixes two answers. Objects, classes and modules
are namespaces: the attributes a kernel reads from them follow the rule of names. Mutable
containers (lists, dicts, sets) are refused, as their contents would be baked in silently;
NumPy arrays only reach ``simt.const.array_like`` (the front end refuses any other use)."""
import ast
import inspect
import textwrap
import weakref
from collections import abc

import numpy as np

from ..errors import CompileError
from .errors import fail


class Source:
    """The parsed source of a kernel or device function and the names it can see."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        self.name = pyfunc.__name__
        try:
            lines, first = inspect.getsourcelines(pyfunc)
            self.filename = inspect.getsourcefile(pyfunc) or "<unknown>"
        except (OSError, TypeError) as exc:
            raise CompileError(f"cannot read the source of '{pyfunc.__name__}': {exc}; simt "
                               "compiles kernels from their source, so define them in a file "
                               "(not in an interactive prompt without source)") from None
        self.text = textwrap.dedent("".join(lines))
        self.first_line = first
        tree = ast.parse(self.text)
        ast.increment_lineno(tree, first - 1)
        self.tree = tree
        self.fndef = next(n for n in tree.body if isinstance(n, (ast.FunctionDef,
                                                                  ast.AsyncFunctionDef)))
        self.lines = self.text.splitlines()
        self.globals = pyfunc.__globals__
        self.reads = {}

    def line_text(self, line):
        index = line - self.first_line
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def lookup(self, name, loc):
        """(found, value) of a global or closure name; those found are kept in ``reads``
        (the function's dependencies: the cache key and the symbols a launch passes)."""
        found, value = read(self.pyfunc, name)
        if found:
            self.reads[name] = self._checked(name, value, loc)
            return True, value
        builtins = self.globals.get("__builtins__")
        table = builtins if isinstance(builtins, dict) else getattr(builtins, "__dict__", {})
        if name in table:
            return True, table[name]
        return False, None

    def attribute(self, base, name, attr, loc):
        """(found, value) of ``base.attr``, where ``base`` was read as ``name`` (a global,
        closure or attribute chain; "" when it was not): chains rooted at a read are
        dependencies as names are (``cfg.N``, ``cfg.sq``)."""
        if isinstance(base, np.ndarray):
            fail(self, loc, f"the NumPy array '{name or 'array'}' cannot be read inside a "
                 "kernel", "pass it as an argument, or bake it in with "
                 "simt.const.array_like, or make it a module-level simt.Constant",
                 kernel=self.name)
        if name and self.reads.get(name, _NONE) is base:
            chain = f"{name}.{attr}"
            found, value = read(self.pyfunc, chain)
            if found:
                self.reads[chain] = self._checked(chain, value, loc)
            return found, value
        if not hasattr(base, attr):
            return False, None
        return True, getattr(base, attr)

    def _checked(self, name, value, loc):
        what = refused(value)
        if what is not None:
            fail(self, loc, f"'{name}' is {what}, which kernels do not read from Python: its "
                 "contents would be baked into the compiled code and later changes ignored",
                 "pass it as a kernel argument, or make it a module-level simt.Constant "
                 "(read-only) or simt.Global (docs/kernel-globals.md)", kernel=self.name)
        return value


_NONE = object()
_frozen = weakref.WeakKeyDictionary()   # function -> {name or attribute chain: value}


def read(pyfunc, chain):
    """(found, value) of a global or closure name, or of an attribute chain rooted at one
    ("cfg.N"), as ``pyfunc`` sees it: the value of the first read in this process."""
    try:
        frozen = _frozen.setdefault(pyfunc, {})
    except TypeError:                      # not weakly referable: read every time
        frozen = {}
    if chain in frozen:
        return True, frozen[chain]
    head, dot, attr = chain.rpartition(".")
    if dot:
        found, base = read(pyfunc, head)
        if not found or not hasattr(base, attr):
            return False, None
        value = getattr(base, attr)
    else:
        found, value = _name(pyfunc, chain)
        if not found:
            return False, None
    frozen[chain] = value
    return True, value


def _name(pyfunc, name):
    if pyfunc.__closure__:
        for free, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
            if free == name:
                try:
                    return True, cell.cell_contents
                except ValueError:
                    return False, None
    if name in pyfunc.__globals__:
        return True, pyfunc.__globals__[name]
    return False, None


def refused(value):
    """Why a kernel may not read ``value`` (a phrase), or None: mutable containers (and
    tuples holding one) are refused, since their contents would be baked in silently."""
    if isinstance(value, tuple):
        return next((why for why in map(refused, value) if why is not None), None)
    if isinstance(value, (abc.MutableSequence, abc.MutableMapping, abc.MutableSet)):
        return f"a {type(value).__name__}"
    return None
