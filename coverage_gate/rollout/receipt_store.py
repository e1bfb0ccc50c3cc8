"""Receipt files: written atomically under their content's hash, read one at a time.

A receipt folder holds ``<sha256>.receipt.json.gz`` files. Anything else in it (a README, a
flags snapshot, another tool's files, a temporary file of a writer still at work, a subfolder)
is not a receipt: it is skipped and counted, never read, so a folder can be shared. A file with
the receipt suffix is a receipt, and one whose name is not a SHA-256 fails.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from coverage_gate.contracts.receipt import Receipt
from coverage_gate.edges.files import write_atomic
from coverage_gate.errors import BadInputError
from coverage_gate.rollout.receipts import (
    HEX_DIGITS,
    SUFFIX,
    ReceiptError,
    compress,
    content,
    decompress,
    file_name,
    parse,
)

__all__ = [
    "Listing",
    "Names",
    "each",
    "listing",
    "names",
    "read",
    "read_content",
    "well_named",
    "write",
]

_HEX = frozenset("0123456789abcdef")


def write(directory: Path, receipt: Receipt) -> Path:
    """Write ``receipt`` into ``directory`` (created if need be) and return its path. The same
    content always lands on the same name, so writing it twice leaves one file."""
    data = content(receipt)
    path = directory / file_name(data)
    try:
        write_atomic(path, compress(data), make_parents=True)
    except OSError as error:
        raise BadInputError(
            f"receipt folder {directory}: cannot be written ({error.strerror or error})"
        ) from None
    return path


@dataclass
class Listing:
    """The receipt files of a folder, by name, and how many other entries were skipped."""

    paths: list[Path]
    skipped: int


@dataclass
class Names:
    """The receipt files of a folder as plain names (lighter to hold than paths, for folders of
    many thousand receipts), and how many other entries were skipped."""

    folder: Path
    names: list[str]
    skipped: int


def names(directory: Path) -> Names:
    """The folder's receipt file names in name order (names only are held, never contents)."""
    if not directory.is_dir():
        what = "no such folder" if not directory.exists() else "not a folder"
        raise BadInputError(f"receipt folder {directory}: {what}")
    found: list[str] = []
    skipped = 0
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.endswith(SUFFIX) and entry.is_file():
                    found.append(entry.name)
                else:
                    skipped += 1
    except OSError as error:
        raise BadInputError(
            f"receipt folder {directory}: cannot be read ({error.strerror or error})"
        ) from None
    found.sort()
    return Names(directory, found, skipped)


def listing(directory: Path) -> Listing:
    """The folder's receipt files in name order (names only are held, never contents)."""
    found = names(directory)
    return Listing([directory / name for name in found.names], found.skipped)


def well_named(path: Path) -> bool:
    stem = path.name.removesuffix(SUFFIX)
    return len(stem) == HEX_DIGITS and set(stem) <= _HEX


def read_content(path: Path) -> bytes:
    """A receipt file's content (its canonical JSON), or ``BadInputError`` naming the file."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BadInputError(f"receipt {path}: cannot be read ({error.strerror or error})") from None
    try:
        return decompress(data)
    except ReceiptError as error:
        raise BadInputError(f"receipt {path}: {error}") from None


def read(path: Path) -> Receipt:
    """A receipt file, validated, or ``BadInputError`` naming the file and the field at fault."""
    data = read_content(path)
    try:
        return parse(data)
    except ReceiptError as error:
        raise BadInputError(f"receipt {path}: {error}") from None


def each(directory: Path) -> Iterator[tuple[Path, bytes]]:
    """Each receipt file's path and content, one at a time, in name order."""
    for path in listing(directory).paths:
        yield path, read_content(path)
