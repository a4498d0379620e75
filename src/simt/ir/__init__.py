"""The typed IR: the ground floor every other layer of simt reads.

``simt.ir`` re-exports the nodes (``nodes.py``); ``simt.ir.types`` holds the types;
``walk`` is the one traversal (and the call graph), ``printer`` the text form,
``verify`` the verifier run after every pass in tests; the target-neutral passes
(``inline``, ``uniform``, ``fission``, ``regions``) live beside them.
Nothing here imports llvmlite, a backend or the runtime.
"""

from .nodes import *          # noqa: F401,F403
from .nodes import walk_stmts, contains_barrier   # noqa: F401
