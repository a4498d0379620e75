"""Plain text (docstrings, example descriptions) put into generated Markdown pages so that
it renders as written: ``k[grid, block](args)`` would otherwise be a link, ``wait_prior<n>``
an HTML tag, ``a*b + c*d`` emphasis and ``__syncthreads`` bold."""

_MARKDOWN = {c: "\\" + c for c in "\\`*_[]|"} | {"<": "&lt;", ">": "&gt;"}


def escape(text):
    """``text`` on one line, every character Markdown gives a meaning escaped."""
    return "".join(_MARKDOWN.get(c, c) for c in " ".join(text.split()))


def prose(text):
    """A docstring paragraph: its ````literals```` become code spans, the rest is escaped."""
    parts = " ".join(text.split()).split("``")
    return "".join(f"`{part}`" if i % 2 else escape(part) for i, part in enumerate(parts))
