"""The typed IR: the ground floor every other layer of simt reads.

``simt.ir`` re-exports the nodes (``nodes.py``, loaded at first use); ``simt.ir.types`` holds the types;
``walk`` is the one traversal (and the call graph), ``printer`` the text form,
``verify`` the verifier run after every pass in tests; the target-neutral passes
(``inline``, ``uniform``, ``fission``, ``regions``) live beside them.
Nothing here imports llvmlite, a backend or the runtime.
"""



def __getattr__(name):
    """``simt.ir.Function`` and the other nodes, loaded at first use: the runtime reads
    ``simt.ir.types`` at import, and the nodes (dataclasses, slow to create) only compiles
    need."""
    import importlib
    try:
        return importlib.import_module(f"{__name__}.{name}")    # a module: types, walk ...
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    nodes = importlib.import_module(f"{__name__}.nodes")
    try:
        return getattr(nodes, name)
    except AttributeError:
        raise AttributeError(f"module 'simt.ir' has no attribute '{name}'") from None
