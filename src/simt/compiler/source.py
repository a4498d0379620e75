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
import linecache
import re
import sys
import textwrap
import threading
import weakref
from collections import abc

import numpy as np

from ..errors import CompileError
from .errors import fail


def syntax_nodes(root):
    """``root`` and every syntax node inside it, in ``ast.walk``'s order (breadth first),
    as a list: ``ast.walk``'s generators cost 2.5x as much on a kernel of thousands of
    lines (bench/compile_time.py)."""
    found = [root]
    for node in found:                  # the list grows behind the loop: breadth first
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                found.append(value)
            elif isinstance(value, list):
                found.extend([item for item in value if isinstance(item, ast.AST)])
    return found


def remember_command_line_source():
    """Put the program of ``python -c CODE`` into linecache as ``<string>``, where
    ``inspect`` looks for it: Python keeps no copy of it, but ``sys.orig_argv`` does."""
    argv = getattr(sys, "orig_argv", [])
    if sys.argv[:1] == ["-c"] and "-c" in argv[:-1] and "<string>" not in linecache.cache:
        code = argv[argv.index("-c") + 1]
        linecache.cache["<string>"] = (len(code), None, code.splitlines(True), "<string>")


def source_lines(pyfunc, tokenized=False):
    """(lines, first line number, file name) of a function's source; a CompileError saying
    where kernels can be defined when Python kept no source for it. The lines end where
    the function's code does (see ``_block``); ``tokenized``: where Python's tokenizer says
    (``inspect.getsourcelines``), which may add trailing comment lines."""
    code = getattr(pyfunc, "__code__", None)
    name = code.co_name if code is not None else getattr(pyfunc, "__name__", repr(pyfunc))
    remember_command_line_source()
    try:
        if tokenized:
            lines, first = inspect.getsourcelines(pyfunc)
        else:
            inner = inspect.unwrap(pyfunc)
            lines, start = inspect.findsource(inner)
            lines, first = _block(lines, start, getattr(inner, "__code__", None)), start + 1
        filename = inspect.getsourcefile(pyfunc) or "<unknown>"
    except (OSError, TypeError) as exc:
        raise CompileError(
            f"cannot read the source of '{name}' ({exc}): simt compiles kernels from their "
            "source, and Python kept none for it. Define it in a file, in `python -c`, in "
            "IPython or Jupyter, or in the REPL of Python 3.13 or later (these keep the "
            "source); the plain REPL of older Pythons and code piped to `python -` do not"
        ) from None
    if not re.search(rf"\bdef\s+{re.escape(name)}\b", "".join(lines[:50])):
        raise CompileError(f"the source Python gives for '{name}' ({filename}) is not its "
                           "definition (was the file edited or the code exec'd from a "
                           "string?); define the kernel in a file")
    return lines, first, filename


def _block(lines, start, code):
    """The lines of the function whose code is ``code`` and whose first line (``def`` or
    decorator) is ``lines[start]``: up to the last line its code's instructions cover,
    when the next line that is not blank or a comment is outside the function (indented
    no deeper than ``def``, not a closing bracket). Otherwise (a trailing ``pass`` or
    constant, a lambda, no column positions) ``inspect.getblock``, which tokenizes the
    whole function: 60 ms for a kernel of 3,000 lines (bench/compile_time.py)."""
    end = _last_line(code) if code is not None and code.co_name != "<lambda>" else None
    if end is not None and start < end <= len(lines) and \
            not lines[end - 1].rstrip().endswith("\\"):
        first = lines[start]
        margin = first[:len(first) - len(first.lstrip())]
        nxt = next((line for line in lines[end:]
                    if line.strip() and not line.lstrip().startswith("#")), None)
        if "\t" not in margin and (nxt is None or (
                "\t" not in nxt[:len(nxt) - len(nxt.lstrip())] and
                len(nxt) - len(nxt.lstrip()) <= len(margin) and nxt.lstrip()[0] not in ")]}")):
            return lines[start:end]
    return inspect.getblock(lines[start:])


def _last_line(code):
    """The last source line that an instruction of ``code`` (or of a function, lambda or
    class body inside it) covers, or None where Python keeps no end lines."""
    ends = [end for _, end, _, _ in code.co_positions() if end is not None]
    ends += [_last_line(c) or 0 for c in code.co_consts if hasattr(c, "co_positions")]
    return max(ends, default=None) or None


# CPython before 3.12 counts ast.parse's recursion depth per process, not per thread: two
# threads parsing at once (a GIL switch inside one, at a finalizer) raise "SystemError: AST
# constructor recursion depth mismatch" (CPython gh-106905; tools/stress.py met it).
_parse_lock = threading.Lock()


class Source:
    """The parsed source of a kernel or device function and the names it can see."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        self.name = pyfunc.__name__
        lines, first, self.filename = source_lines(pyfunc)
        try:
            tree = self._parse(lines, first)
        except SyntaxError:     # source_lines' end was not the function's: the tokenizer's
            tree = self._parse(source_lines(pyfunc, tokenized=True)[0], first)
        self.tree = tree
        self.fndef = next(n for n in tree.body if isinstance(n, (ast.FunctionDef,
                                                                  ast.AsyncFunctionDef)))
        self.lines = self.text.splitlines()
        self.globals = pyfunc.__globals__
        self.reads = {}

    def _parse(self, lines, first):
        self.text = textwrap.dedent("".join(lines))
        self.first_line = first
        with _parse_lock:      # blank lines first: the file's line numbers, without a
            return ast.parse("\n" * (first - 1) + self.text)   # pass over the tree

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
