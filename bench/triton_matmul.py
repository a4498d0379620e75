"""A tutorial-style Triton matmul (f16 in, f32 accumulate, f16 out; C = A @ Bt.T with Bt
row-major N x K), the Python peer simt's Hopper GEMM is measured against in the same run
(bench/hopper_gemm.py). Autotuned over a few block shapes, as Triton's tutorial does."""
import triton
import triton.language as tl

CONFIGS = [triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP": 8}, num_stages=3, num_warps=8),
           triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP": 8}, num_stages=4, num_warps=4),
           triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP": 8}, num_stages=4, num_warps=8),
           triton.Config({"BM": 256, "BN": 128, "BK": 64, "GROUP": 8}, num_stages=3, num_warps=8)]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul(a, b, c, M, N, K, sam, sak, sbn, sbk, scm, scn,
            BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    num_m, num_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    per_group = GROUP * num_n
    first_m = (pid // per_group) * GROUP
    group = min(num_m - first_m, GROUP)
    pm = first_m + (pid % per_group) % group
    pn = (pid % per_group) // group
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a + rm[:, None] * sam + rk[None, :] * sak
    pb = b + rn[None, :] * sbn + rk[:, None] * sbk
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(pa, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(pb, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        pa += BK * sak
        pb += BK * sbk
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(tl.float16),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def matmul(a, bt, c):
    """c = a @ bt.T (torch float16 tensors on the GPU)."""
    M, K = a.shape
    N = bt.shape[0]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _matmul[grid](a, bt, c, M, N, K, a.stride(0), a.stride(1), bt.stride(0), bt.stride(1),
                  c.stride(0), c.stride(1))
