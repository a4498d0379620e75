"""The same kernel compiles to the same PTX in every process: names of shared arrays,
baked constant arrays and printf formats come from their order and contents, not from
object addresses or Python's per-process string hash (the CUDA driver keeps its JIT
results keyed by the PTX text). Needs no GPU: the CUDA back end makes PTX anywhere."""
import os
import subprocess
import sys

SOURCE = r'''
import numpy as np
import simt
TABLE = np.arange(8, dtype=np.float32)

@simt.kernel
def k(out):
    tile = simt.shared.array(64, np.float32)
    other = simt.shared.array(64, np.float32)
    table = simt.const.array_like(TABLE)
    t = simt.threadIdx.x
    tile[t] = table[t % 8]
    other[t] = tile[63 - t]
    simt.syncthreads()
    if t == 0:
        simt.printf("first %f\n", other[0])
    out[t] = other[t]

print(k.ptx("(float32[::1],)"))
'''


def _ptx(seed, tmp_path):
    env = dict(os.environ, PYTHONHASHSEED=str(seed), SIMT_CACHE="0",
               SIMT_CACHE_DIR=str(tmp_path / f"cache{seed}"))
    done = subprocess.run([sys.executable, "-c", SOURCE], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_two_processes_make_the_same_ptx(tmp_path):
    first, second = _ptx(1, tmp_path), _ptx(2, tmp_path)
    assert "simt_shared_tile" in first and "simt_shared_other" in first
    assert first == second
