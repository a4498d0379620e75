"""Helpers the examples share: where output goes, and writing PNG files."""
import os
import struct
import zlib

import numpy as np


def out_path(out_dir, name):
    out_dir = out_dir or os.path.join(os.getcwd(), "simt-out")
    os.makedirs(out_dir, exist_ok=True)
    return os.path.join(out_dir, name)


def save_png(path, rgba):
    """Write an (h, w, 4) uint8 image as a PNG (Pillow if present, else zlib by hand)."""
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    try:
        from PIL import Image
        Image.fromarray(rgba, "RGBA").save(path)
        return path
    except ImportError:
        pass
    h, w, _ = rgba.shape
    rows = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)
    return path
