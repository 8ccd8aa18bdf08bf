"""Read the pixels of a PNG with the standard library only (zlib), for the screenshot tests.

Handles what Chromium writes: 8-bit greyscale, RGB or RGBA, not interlaced, all five filter
types. Slow-ish pure Python, fine for a screenshot or two; no Pillow dependency just for tests.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 6: 4}  # colour type -> samples per pixel


@dataclass
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]  # unfiltered scanlines, `width * channels` bytes each

    def rgb(self, x: int, y: int) -> tuple[int, int, int]:
        row, c = self.rows[y], self.channels
        px = row[x * c:(x + 1) * c]
        return (px[0], px[0], px[0]) if c == 1 else (px[0], px[1], px[2])

    def pixels(self, top: int = 0, bottom: int | None = None, step: int = 1):
        """(r, g, b) of every `step`-th pixel in rows top..bottom."""
        for y in range(top, min(bottom or self.height, self.height), step):
            for x in range(0, self.width, step):
                yield self.rgb(x, y)


def read_png(path: str | Path, max_rows: int | None = None) -> Image:
    """Decode `path`; with `max_rows`, only the first rows (the top of a screenshot)."""
    data = Path(path).read_bytes()
    if not data.startswith(SIGNATURE):
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = len(SIGNATURE), [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour {colour}, "
                         f"interlace {interlace})")
    channels = CHANNELS[colour]
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows: list[bytes] = []
    prev = bytes(stride)
    for y in range(height if max_rows is None else min(height, max_rows)):
        start = y * (stride + 1)
        line = _unfilter(raw[start], bytearray(raw[start + 1:start + 1 + stride]), prev,
                         channels)
        rows.append(line)
        prev = line
    return Image(width, len(rows), channels, rows)


def _unfilter(kind: int, line: bytearray, prev: bytes, bpp: int) -> bytes:
    n = len(line)
    if kind == 0:
        return bytes(line)
    if kind == 1:  # Sub
        for i in range(bpp, n):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:  # Up
        return bytes((a + b) & 0xFF for a, b in zip(line, prev))
    elif kind == 3:  # Average
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif kind == 4:  # Paeth
        for i in range(n):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pred) & 0xFF
    else:
        raise ValueError(f"unknown PNG filter {kind}")
    return bytes(line)
