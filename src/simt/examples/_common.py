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


class Example:
    """One runnable program of a module that holds several (listed in its EXAMPLES).

    ``main(device=None, out_dir=None)`` runs it as ``python -m simt run NAME`` does;
    ``SECTION`` is the book's section number, which orders the listing.
    """

    def __init__(self, name, section, description, main):
        self.NAME, self.SECTION, self.DESCRIPTION, self.main = name, section, description, main

    def __repr__(self):
        return f"Example({self.NAME!r}, section {self.SECTION})"


def book_order(section):
    """A sort key for section numbers such as '4.2.2', '10.7' and 'A.1.2' (appendices last)."""
    parts = str(section).split(".") if section else ["~"]
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts]
