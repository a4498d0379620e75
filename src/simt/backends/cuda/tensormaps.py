"""TMA tensor maps on the GPU: runtime/tensormaps.py's description encoded by the driver's
``cuTensorMapEncodeTiled`` into the 128-byte CUtensorMap that kernels take by value (a
``.param .align 64 .b8 [128]`` grid constant: params.py). Dimensions, strides and the box
go to the driver innermost first (NumPy's order reversed)."""
import ctypes

from ...ir.types import float8_storage, is_bfloat16_dtype
from .driver import api, call

# a bit copy: each element type by its width; floats keep theirs for the NaN fill
_TYPES = {("f", 2): "FLOAT16", ("f", 4): "FLOAT32", ("f", 8): "FLOAT64",
          ("u", 1): "UINT8", ("i", 1): "UINT8", ("u", 2): "UINT16", ("i", 2): "UINT16",
          ("u", 4): "UINT32", ("i", 4): "INT32", ("u", 8): "UINT64", ("i", 8): "INT64"}
_SWIZZLES = {"none": "NONE", "32B": "32B", "64B": "64B", "128B": "128B"}
SIZE = 128


def data_type(d, simt_type):
    dtype = simt_type.dtype
    if is_bfloat16_dtype(dtype):
        name = "BFLOAT16"
    elif float8_storage(dtype) is not None:       # FP8: the driver has no type for it
        name = "UINT8"
    else:
        name = _TYPES[dtype.kind, dtype.itemsize]
    return getattr(d.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{name}")


def encode(tmap):
    """The CUtensorMap's 128 bytes for a runtime TensorMap."""
    d = api()
    t = tmap._simt_type
    rank = t.ndim
    dims = [d.cuuint64_t(n) for n in reversed(tmap.shape)]
    strides = [d.cuuint64_t(s) for s in reversed(tmap.strides[:-1])]
    box = [d.cuuint32_t(b) for b in reversed(t.box)]
    ones = [d.cuuint32_t(1)] * rank
    swizzle = getattr(d.CUtensorMapSwizzle, f"CU_TENSOR_MAP_SWIZZLE_{_SWIZZLES[t.swizzle]}")
    fill = d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE if t.oob_fill == "zero" \
        else d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
    encoded = call(d.cuTensorMapEncodeTiled, data_type(d, t), rank, tmap.ptr, dims, strides,
                   box, ones, d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                   d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B, fill)
    return ctypes.string_at(encoded.getPtr(), SIZE)
