"""Writing files so that an interrupted program never leaves half of one behind.

Every file rlenvs and rlenvs_train write for users (exported Parquet, SFT data, eval
trajectories, a run's config, metrics and reward curve) goes through `atomic_path`: readers
see the old file or the new one, never a mix, whatever kills the writer.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A new, empty temporary file beside `path` to write to; flushed to disk and moved onto
    `path` when the block ends without an error, removed when it raises. Beside, not in
    /tmp: `os.replace` is atomic only within one file system. Created with mode 0o666 less
    the umask (not mkstemp's 0o600), so the result has the permissions a plain
    `open(path, "w")` would give it."""
    path = Path(path)
    for _ in range(100):
        temporary = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 32 random bits
        raise FileExistsError(f"could not create a temporary file beside {str(path)!r}")
    try:
        yield temporary
        descriptor = os.open(temporary, os.O_RDONLY)
        try:
            os.fsync(descriptor)  # the data is on disk before the name points at it
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_folder(folder: Path) -> Iterator[Path]:
    """A staging folder beside `folder`, renamed onto it when the block succeeds (`atomic_path`
    for a folder): a crash mid-save leaves no half-written model that a resumed run would load."""
    staging = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
