"""A small PNG reader for screenshots: 8-bit RGB or RGBA, not interlaced (what Chromium writes).

``read_png(data)`` gives ``(width, height, channels, rows)``, each row the bytes of its pixels
after the scanline filters are undone; :func:`pixel_stats` says how far a picture is from blank.
"""

from __future__ import annotations

import struct
import zlib

__all__ = ["read_png", "pixel_stats"]


def read_png(data: bytes) -> tuple[int, int, int, list[bytes]]:
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            elif kind != 0:
                raise ValueError(f"row {y}: unknown filter {kind}")
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def pixel_stats(data: bytes, step: int = 3) -> tuple[float, int]:
    """``(variance of the grey level, distinct colours)`` over every ``step``-th pixel of every
    ``step``-th row: a blank page has variance 0 and one colour."""
    width, height, channels, rows = read_png(data)
    greys: list[int] = []
    colours: set[bytes] = set()
    for row in rows[::step]:
        for x in range(0, width, step):
            px = row[x * channels:x * channels + 3]
            colours.add(px)
            greys.append((px[0] * 299 + px[1] * 587 + px[2] * 114) // 1000)
    mean = sum(greys) / len(greys)
    return sum((g - mean) ** 2 for g in greys) / len(greys), len(colours)
