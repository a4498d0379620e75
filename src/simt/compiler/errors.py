"""Turning a problem found in kernel source into a CompileError users can act on."""
from ..errors import CompileError


def fail(source, loc, message, hint=None, kernel=None):
    """Raise a CompileError naming the file, line and construct, with the span underlined."""
    text = source.line_text(loc.line) if source is not None else ""
    lines = [message, f"  in '{kernel or loc.function}', {loc.filename}:{loc.line}:{loc.col + 1}"]
    if text.strip():
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        lines.append("      " + stripped)
        width = max(1, (loc.end_col or len(text)) - loc.col) if loc.end_col > loc.col else 1
        lines.append("      " + " " * max(0, loc.col - indent) + "^" * width)
    if hint:
        lines.append("  " + hint)
    raise CompileError("\n".join(lines), filename=loc.filename, line=loc.line, col=loc.col,
                       construct=text.strip(), why=message)


class _LineCache:
    """The source lines of a file, for problems found after the front end (in a lowering)."""

    def __init__(self, filename):
        self.filename = filename

    def line_text(self, line):
        import linecache
        return linecache.getline(self.filename, line).rstrip("\n")


def fail_at(loc, message, hint=None):
    """``fail`` from a lowering, which has the location but not the front end's source."""
    fail(_LineCache(loc.filename), loc, message, hint)
