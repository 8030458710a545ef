"""Writes the image nginx-tls-static serves: OUT/srv/images/Renard-1.png, a 160x160 RGB
PNG of deterministic noise (about 77 KB: noise does not compress, so every request
sends the whole file, as a photo would). Standard library only.

    python3 image.py OUT
"""
import random
import struct
import sys
import zlib
from pathlib import Path


def chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png(width: int, height: int, seed: int) -> bytes:
    rng = random.Random(seed)
    rows = b"".join(b"\0" + rng.randbytes(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: image.py OUT")
    out = Path(sys.argv[1]) / "srv" / "images"
    out.mkdir(parents=True, exist_ok=True)
    (out / "Renard-1.png").write_bytes(png(160, 160, seed=1))


if __name__ == "__main__":
    main()
