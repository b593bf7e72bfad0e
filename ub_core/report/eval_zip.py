"""A decompressed-size cap per member of an Inspect ``.eval`` log (a zip), checked before Inspect reads anything.

Inspect parses each member it reads (``header.json``, one member per sample) whole, at about twice its
decompressed size, and decompresses a member whole without looking at the size the zip declares for it: a
1.5 MB ``.eval`` whose header expanded to 1.5 GB took 3.3 GB. :func:`oversized_member` refuses such a log in
two steps, in bounded memory:

1. the zip's central directory: a member declared larger than the cap;
2. each member's data, streamed through its decompressor in 1 MB pieces and stopped one byte past the declared
   size: a member whose directory understates what its data expands to (a forged directory) is refused at that
   byte, whatever it would expand to.

Compression methods: stored, deflate, and zstandard (93, what Inspect writes); any other is refused, as Inspect
cannot read it either.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO

from ..untrusted import NotRegularFileError, UnpackBudget, open_regular

__all__ = ["oversized_member"]

_PIECE = 2**20
_STORED, _DEFLATE, _ZSTD = 0, 8, 93
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, 22 bytes we do not need, name and extra-field lengths


class _Slice:
    """``compressed`` bytes of ``fh`` from ``start``, read a piece at a time (what a decompressor pulls from)."""

    def __init__(self, fh: BinaryIO, start: int, length: int) -> None:
        fh.seek(start)
        self.fh, self.left = fh, length

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.fh.read(n)
        self.left -= len(data)
        return data


def _expanded_size(fh: BinaryIO, info: zipfile.ZipInfo, stop: int) -> int:
    """How many bytes the member's data expands to, counted up to ``stop`` (never more is decompressed)."""
    fh.seek(info.header_offset)
    sig, name_len, extra_len = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
    if sig != b"PK\x03\x04":
        raise ValueError("bad local header")
    data = _Slice(fh, info.header_offset + _LOCAL_HEADER.size + name_len + extra_len, info.compress_size)
    out = 0
    if info.compress_type == _STORED:
        return min(info.compress_size, stop)
    if info.compress_type == _DEFLATE:
        dec = zlib.decompressobj(-zlib.MAX_WBITS)
        pending = b""
        while out < stop:
            if not pending:
                pending = data.read(_PIECE)
                if not pending:
                    break
            out += len(dec.decompress(pending, _PIECE))
            pending = dec.unconsumed_tail
            if dec.eof:
                break
        return min(out, stop)
    import zstandard  # Inspect's own dependency for the zstd members it writes

    reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
    while out < stop:
        piece = reader.read(_PIECE)
        if not piece:
            break
        out += len(piece)
    return min(out, stop)


def _size(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 10 * 2**20 else f"{n:,} bytes"


def oversized_member(path: str | Path, cap: int, budget: UnpackBudget | None = None) -> str | None:
    """Why the ``.eval`` log at ``path`` must not be read (one line), or None: a member over ``cap`` decompressed
    bytes (declared, or found while streaming), a member expanding past its declared size, an unsupported
    compression method, or the run's ``budget`` of unpacked bytes spent (every member streamed here is counted).
    A file that is not a readable zip is None here: Inspect names that itself. Opened through the gate: only a
    regular file."""
    try:
        with os.fdopen(open_regular(path, follow_links=True), "rb") as fh, zipfile.ZipFile(fh) as zf:
            for info in zf.infolist():
                name = info.filename[:80]
                if info.file_size > cap:
                    return (f"member {name} expands to {_size(info.file_size)}, "
                            f"over the {_size(cap)} cap per .eval member")
                if info.compress_type not in (_STORED, _DEFLATE, _ZSTD):
                    return f"member {name} uses compression method {info.compress_type}, which Inspect cannot read"
                if budget is not None and budget.used + info.file_size > budget.total:
                    return (f"member {name}: the run's budget of {_size(budget.total)} unpacked from .eval logs is "
                            "spent")
                expanded = _expanded_size(fh, info, info.file_size + 1)
                if budget is not None:
                    budget.used += expanded
                if expanded > info.file_size:
                    return (f"member {name} expands past the {info.file_size:,} bytes its zip directory declares "
                            f"(a forged size); not read")
    except zipfile.BadZipFile:
        return None
    except NotRegularFileError as e:
        return str(e)
    except OSError as e:
        return f"cannot open ({e.strerror or type(e).__name__})"
    except Exception as e:  # noqa: BLE001 - zlib.error, zstandard.ZstdError, whatever a forged member raises
        return f"damaged .eval zip ({type(e).__name__}: {str(e)[:200]})"
    return None
