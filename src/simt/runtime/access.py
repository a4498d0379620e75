"""Read-only host arrays stay read-only: a launch refuses a NumPy array that cannot be
written (``writeable=False``, ``np.frombuffer(bytes)``) for a parameter the kernel writes."""
import numpy as np


def check_writes(kernel, types, args):
    """Raise ValueError naming the kernel, the parameter and the line that writes it."""
    frozen = [i for i, a in enumerate(args)
              if (isinstance(a, np.ndarray) and not a.flags.writeable)
              or getattr(a, "readonly", False) is True]
    if not frozen:
        return
    from ..compiler.writes import written_params     # the IR: only for read-only arrays
    fn = kernel.typed_ir(types)
    written = written_params(fn)
    for index in frozen:
        loc = written.get(index)
        if loc is not None:
            name = fn.params[index][0]
            raise ValueError(
                f"kernel '{kernel.__name__}' writes its parameter '{name}' ({loc.filename}, "
                f"line {loc.line}, in '{loc.function}'), and the array passed for it "
                "is read-only (writeable=False, memory such as bytes that must not "
                "change, or a read-only export of another library). Pass a writeable copy: "
                "np.array(x)")
