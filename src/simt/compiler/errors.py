"""Turning a problem found in kernel source into a CompileError users can act on."""
import warnings

from ..errors import CompileError, CompileWarning


def fail(source, loc, message, hint=None, kernel=None):
    """Raise a CompileError naming the file, line and construct, with the span underlined."""
    text = source.line_text(loc.line) if source is not None else ""
    raise CompileError(_report(text, loc, message, hint, kernel), filename=loc.filename,
                       line=loc.line, col=loc.col, construct=text.strip(), why=message)


_warned = set()         # (file, line, column, message) of the warnings issued so far


def warn(source, loc, message, hint=None, kernel=None):
    """Issue a CompileWarning worded as ``fail`` words errors, once per place and message
    in a process (a kernel compiled again, for other types or another device, says
    nothing new)."""
    key = (loc.filename, loc.line, loc.col, message)
    if key in _warned:
        return
    text = source.line_text(loc.line) if source is not None else ""
    warnings.warn_explicit(_report(text, loc, message, hint, kernel), CompileWarning,
                           loc.filename, loc.line)
    _warned.add(key)        # after: a filter that makes it an error raises at each compile


def _report(text, loc, message, hint, kernel):
    """The message, where (kernel, file:line:column), the line with the span underlined,
    and what to do."""
    lines = [message, f"  in '{kernel or loc.function}', {loc.filename}:{loc.line}:{loc.col + 1}"]
    if text.strip():
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        lines.append("      " + stripped)
        width = max(1, (loc.end_col or len(text)) - loc.col) if loc.end_col > loc.col else 1
        lines.append("      " + " " * max(0, loc.col - indent) + "^" * width)
    if hint:
        lines.append("  " + hint)
    return "\n".join(lines)


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
