"""Kernels written out from generated source lines (the front end reads a kernel's source
file), for tests that call one function per output row."""
import importlib.util


def kernel_from_lines(folder, name, params, lines):
    """@simt.kernel def name(params): i = simt.grid(1); if i < out.shape[1]: lines (out is
    2-d: one row per line)."""
    body = "\n".join(f"        {line}" for line in lines)
    path = folder / f"{name}.py"
    path.write_text(f"import numpy as np\nimport simt\n\n\n@simt.kernel\ndef {name}({params}):\n"
                    f"    i = simt.grid(1)\n    if i < out.shape[1]:\n{body}\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
