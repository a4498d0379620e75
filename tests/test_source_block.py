"""compiler/source.py reads a function's lines up to where its code ends (``_block``),
not through Python's tokenizer (60 ms for a kernel of 3,000 lines): the syntax tree must
be the one the tokenizer's lines give, for functions whose last lines hold no code."""
import ast
import importlib
import inspect
import sys
import textwrap

import pytest

from simt.compiler import source

MODULE = '''
def trailing_pass(a):
    x = a + 1
    pass

def closing_bracket(a):
    x = (a
)
y = 3

def trailing_constant(a):
    x = a
    "trailing"
    # comment

    # more
def nested(a):
    def g(b):
        return b + 1
    return g(a)
# a comment at column 0
    # an indented one

class Holder:
    def method(self, a):
        return a
        # trailing

def string_continued(a):
    s = 1; """x
y"""

def else_pass(a):
    if a:
        return 1
    else:
        pass
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    folder = tmp_path_factory.mktemp("blocks")
    (folder / "blockmod.py").write_text(MODULE)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("blockmod")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("blockmod", None)


@pytest.mark.parametrize("name", ["trailing_pass", "closing_bracket", "trailing_constant",
                                  "nested", "Holder.method", "string_continued", "else_pass"])
def test_same_tree_as_the_tokenizer(module, name):
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part)
    lines, first = inspect.getsourcelines(fn)
    expected = ast.dump(ast.parse("\n" * (first - 1) + textwrap.dedent("".join(lines))))
    got = source.Source(fn)
    assert got.first_line == first
    assert ast.dump(got.tree) == expected


def test_a_cut_inside_a_string_falls_back_to_the_tokenizer(module):
    """The code of ``string_continued`` ends on the line its string starts: the lines cut
    there do not parse, and Source takes the tokenizer's."""
    fn = module.string_continued
    assert len(source.source_lines(fn)[0]) < len(inspect.getsourcelines(fn)[0])
    assert source.Source(fn).text.rstrip().endswith('y"""')
