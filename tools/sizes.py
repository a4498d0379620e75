"""Print lines per module and every function over 60 lines: a complexity budget, not a gate.

Usage: python tools/sizes.py [ROOT ...]   (default: src/simt)
"""

import ast
import sys
from pathlib import Path

LONG = 60


def long_functions(tree):
    """(name, first line, length) of each function longer than LONG lines."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > LONG:
                yield node.name, node.lineno, length


def main(roots):
    total = 0
    for root in roots:
        root = Path(root)
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            source = path.read_text()
            lines = source.count("\n")
            total += lines
            print(f"{lines:6d}  {path}")
            for name, line, length in long_functions(ast.parse(source)):
                print(f"        long function {name} ({path}:{line}): {length} lines")
    print(f"{total:6d}  total")


if __name__ == "__main__":
    main(sys.argv[1:] or ["src/simt"])
