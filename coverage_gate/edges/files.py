"""File edges: reading contracts with errors that name the file and the field, atomic writes."""

from __future__ import annotations

import codecs
import contextlib
import errno
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from coverage_gate.contracts.defaults import EVIDENCE_SCHEMA, EVIDENCE_VERSION
from coverage_gate.errors import BadInputError

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

    from coverage_gate.contracts.model import EvidenceDocument

__all__ = [
    "STALE_TEMP_SECONDS",
    "SUPPORTED_EVIDENCE_MAJOR",
    "TEMP_MARK",
    "M",
    "beyond_limits",
    "check_evidence_version",
    "check_writable",
    "describe_validation",
    "dump_model",
    "load_evidence",
    "load_model",
    "parse_json",
    "read_bytes",
    "read_document",
    "remove_stale_temps",
    "temp_path_for",
    "validate_json",
    "write_atomic",
]

# pydantic and the contracts are imported where a model is read or written, not here: ``record``
# writes its document with this module's atomic writes and loads no pydantic (start-up time).
M = TypeVar("M", bound="BaseModel")
SUPPORTED_EVIDENCE_MAJOR = int(EVIDENCE_VERSION.split(".")[0])


def read_bytes(path: Path, what: str) -> bytes:
    if "\x00" in str(path):
        raise BadInputError(f"{what} {str(path)!r}: a file name cannot hold a NUL byte")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{what} {path}: is a directory") from None
    except OSError as error:
        raise BadInputError(f"{what} {path}: cannot be read ({error.strerror})") from None


def read_document(path: Path, what: str) -> bytes:
    """A JSON document's bytes; a UTF-8 byte-order mark before it marks the encoding and is
    dropped (``json`` and pydantic would each reject it)."""
    return read_bytes(path, what).removeprefix(codecs.BOM_UTF8)


_AT = re.compile(r"at (line \d+ column \d+)")


def beyond_limits(data: bytes | str, error: Exception) -> str:
    """What is wrong with JSON that Python's parser gave up on without saying where: nested past
    its recursion limit (``RecursionError``), or an integer past its 4,300-digit limit
    (``ValueError``). pydantic's own parser, with lower limits, says where."""
    problem = (
        "JSON nested too deeply to read"
        if isinstance(error, RecursionError)
        else "a number too long to read (over 4,300 digits)"
    )
    import pydantic_core  # noqa: PLC0415 - start-up (module notes)

    try:
        pydantic_core.from_json(data)
    except ValueError as located:
        found = _AT.search(str(located))
        if found is not None:
            return f"{problem}, at {found.group(1)}"
    return problem


def parse_json(data: bytes, path: Path | str, what: str) -> Any:
    try:
        return json.loads(data)
    except UnicodeDecodeError as error:
        raise BadInputError(f"{what} {path}: not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise BadInputError(
            f"{what} {path}: not JSON: line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except (RecursionError, ValueError) as error:
        raise BadInputError(f"{what} {path}: {beyond_limits(data, error)}") from None


def describe_validation(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:5]:
        where = ".".join(str(part) for part in item["loc"]) or "(document)"
        parts.append(f"field '{where}': {item['msg']}")
    more = len(error.errors()) - 5
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def validate_json(model: type[M], data: bytes, path: Path | str, what: str) -> M:
    """Validate JSON text against a strict contract (JSON strings are accepted for enums)."""
    from pydantic import ValidationError  # noqa: PLC0415 - start-up (module notes)

    parse_json(data, path, what)
    try:
        return model.model_validate_json(data)
    except ValidationError as error:
        raise BadInputError(f"{what} {path}: {describe_validation(error)}") from None


def load_model(path: Path, model: type[M], what: str) -> M:
    return validate_json(model, read_document(path, what), path, what)


def check_evidence_version(data: Any, path: Path | str) -> None:
    if not isinstance(data, dict):
        raise BadInputError(f"evidence {path}: not a JSON object")
    schema, version = data.get("schema"), data.get("version")
    if schema != EVIDENCE_SCHEMA:
        raise BadInputError(
            f"evidence {path}: field 'schema' is {schema!r}, not {EVIDENCE_SCHEMA!r}"
        )
    if not isinstance(version, str) or not version.split(".")[0].isdigit():
        raise BadInputError(f"evidence {path}: field 'version' is {version!r}, not 'MAJOR.MINOR'")
    major = int(version.split(".")[0])
    if major > SUPPORTED_EVIDENCE_MAJOR:
        raise BadInputError(
            f"evidence {path}: version {version} is newer than this coverage-gate reads "
            f"({SUPPORTED_EVIDENCE_MAJOR}.x); upgrade coverage-gate"
        )


def load_evidence(path: Path) -> EvidenceDocument:
    data = read_document(path, "evidence")
    check_evidence_version(parse_json(data, path, "evidence"), path)
    from coverage_gate.contracts.model import EvidenceDocument  # noqa: PLC0415 - start-up (module notes)

    return validate_json(EvidenceDocument, data, path, "evidence")


def dump_model(model: BaseModel) -> str:
    return model.model_dump_json(indent=2, by_alias=True) + "\n"


#: Temporary files of ours are named ``.<target>.coverage-gate.<pid>.<random>.tmp``, next to the
#: target (so the final rename stays within one file system).
TEMP_MARK = "coverage-gate"
#: A temporary file of ours older than this is left over from a writer that died or stalled.
STALE_TEMP_SECONDS = 300.0
_TEMP_NAME = re.compile(r"\..*\.coverage-gate\.(?P<pid>\d{1,10})\.[0-9a-f]{8}\.tmp", re.DOTALL)
_TEMP_TARGET_CHARS = 120  # keeps the temporary name within NAME_MAX for any target name


def temp_path_for(path: Path) -> Path:
    """A fresh temporary name of ours for ``path``, in its folder, carrying our process id."""
    name = f".{path.name[:_TEMP_TARGET_CHARS]}.{TEMP_MARK}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    return path.with_name(name)


def _writer_running(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of this process may be writing
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    except (OverflowError, OSError):
        return False  # not a process id this system can have
    return True


def remove_stale_temps(directory: Path, *, now: float | None = None) -> list[Path]:
    """Remove the temporary files of ours in ``directory`` whose writer is gone (its process id is
    not running) or that are older than ``STALE_TEMP_SECONDS``: what a writer killed mid-write
    (``kill -9``) leaves behind. Files of any other name are never touched. Returns what went."""
    moment = time.time() if now is None else now
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    removed: list[Path] = []
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if match is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        stale = moment - info.st_mtime > STALE_TEMP_SECONDS
        if stale or not _writer_running(int(match["pid"])):
            with contextlib.suppress(OSError):  # gone already, or not ours to remove
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def check_writable(path: Path) -> None:
    """Raise ``OSError`` unless ``write_atomic`` could write ``path`` now: its folder takes a new
    file (the probe is a temporary file of ours, removed at once), or, for a device or FIFO, the
    target opens for writing without blocking."""
    if path.is_char_device() or path.is_fifo():
        if not os.access(path, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return
    probe = temp_path_for(path)
    os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    probe.unlink()


def write_atomic(path: Path, text: str | bytes, *, make_parents: bool = False) -> None:
    """Write ``text`` (UTF-8 text, or bytes as they are) so that ``path`` holds either its old
    content or all of the new one.

    The text goes to a temporary file of ours next to ``path`` (see ``temp_path_for``), is synced,
    and replaces ``path`` in one rename. Temporary files that earlier writers in that folder left
    behind when they were killed are removed first. ``make_parents`` creates the folder.

    A device or FIFO target (``/dev/stdout``, ``/dev/null``, a named pipe) is written straight
    through: replacing it with a file would break it for everyone else.
    """
    data = text.encode() if isinstance(text, str) else text
    if path.is_char_device() or path.is_fifo():
        with path.open("wb") as handle:
            handle.write(data)
        return
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path.parent if str(path.parent) else Path())
    tmp = temp_path_for(path)
    # Created like any new file (mode 0666 less the umask), so the target gets ordinary
    # permissions once the temporary file replaces it.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
