"""The target interface (compiler/target.py): codegen asks a target only what ``Target``
declares, and a target that lacks a hook says which, whatever kernel reaches it."""
import pathlib
import re

import pytest

import simt
from simt.backends.cpu.target import CpuTarget
from simt.backends.cuda.target import CudaTarget
from simt.compiler.target import Target

SRC = pathlib.Path(simt.__file__).parent
# modules that lower IR, with the target class whose hooks they may use
USERS = {
    "compiler/codegen.py": Target, "compiler/intrinsics.py": Target,
    "compiler/lltypes.py": Target,
    "backends/cpu/emit.py": CpuTarget, "backends/cpu/warp.py": CpuTarget,
    "backends/cpu/textures.py": CpuTarget, "backends/cpu/cooperative.py": CpuTarget,
    "backends/cuda/emit.py": CudaTarget, "backends/cuda/warp.py": CudaTarget,
    "backends/cuda/texlower.py": CudaTarget, "backends/cuda/loops.py": CudaTarget,
}
ABSTRACT = ["record_fault", "shared_data", "dynamic_shared_data", "symbol_data", "special",
            "laneid", "texture_op", "call_print", "emit_barrier",
            "emit_collective", "emit_warp", "emit_grid_sync"]


@pytest.mark.parametrize("path", sorted(USERS))
def test_codegen_uses_only_declared_hooks(path):
    text = (SRC / path).read_text()
    assert not re.search(r"getattr\([^)]*target", text)
    cls = USERS[path]
    instance_attrs = vars(cls(None, {}))
    # target.x, self.target.x, em.target.x (not a module path such as compiler.target.Target)
    for name in set(re.findall(r"(?:(?:\bem|\bself)\.|(?<![\w.]))target\.(\w+)", text)):
        assert hasattr(cls, name) or name in instance_attrs, f"{path}: target.{name}"


class Bare(Target):
    name = "bare"


@pytest.mark.parametrize("hook", ABSTRACT)
def test_missing_hook_names_target_and_hook(hook):
    method = getattr(Bare(None, {}), hook)
    nargs = method.__code__.co_argcount - 1
    with pytest.raises(NotImplementedError, match=f"bare target .* {hook}"):
        method(*[None] * nargs)


@pytest.mark.parametrize("cls", [CpuTarget, CudaTarget])
def test_targets_map_every_memory_space(cls):
    assert set(cls.addrspaces) == set(Target.addrspaces)


def test_shared_layout_is_the_same_on_both_targets():
    import numpy as np

    @simt.kernel
    def two_tiles(out):
        a = simt.shared.array(3, np.int8)
        b = simt.shared.array((4, 4), np.float64)
        a[0] = 1
        b[0, 0] = 2.0
        out[0] = a[0] + b[0, 0]

    from simt.ir import types as T
    fn = two_tiles.typed_ir(T.parse_signature("void(float64[::1])"))
    layouts = []
    for cls in (CpuTarget, CudaTarget):
        target = cls(fn, {})
        target.layout_memory([fn])
        layouts.append((sorted(target.shared_offsets.values()), target.shared_static_bytes))
    assert layouts[0] == layouts[1] == ([0, 16], 16 + 128)
