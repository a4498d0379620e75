"""Where a Python function's source, globals and closure come from."""
import ast
import inspect
import textwrap

from ..errors import CompileError


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
        self.closure = {}
        if pyfunc.__closure__:
            for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
                try:
                    self.closure[name] = cell.cell_contents
                except ValueError:
                    pass

    def line_text(self, line):
        index = line - self.first_line
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def lookup(self, name):
        """(found, value) of a global or closure name; those found are kept in ``reads``
        (the function's dependencies: the cache key and the symbols a launch passes)."""
        if name in self.closure:
            value = self.reads[name] = self.closure[name]
            return True, value
        if name in self.globals:
            value = self.reads[name] = self.globals[name]
            return True, value
        builtins = self.globals.get("__builtins__")
        table = builtins if isinstance(builtins, dict) else getattr(builtins, "__dict__", {})
        if name in table:
            return True, table[name]
        return False, None
