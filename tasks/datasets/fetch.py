"""Where data sets live, checksum verification (cached) and downloading.

Search order for a data set named NAME (e.g. "mnist"): the explicit `data_dir`, then the
environment variable SEARCH_DATA_DIR, then the user cache directory
($XDG_CACHE_HOME or ~/.cache)/shape-search. In each, the files may lie directly in the
directory or in its NAME/ subdirectory. Downloads go to the cache's NAME/ directory.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.request
from pathlib import Path
from typing import Iterable

from core.errors import DataError

ENV_DATA_DIR = "SEARCH_DATA_DIR"
STAMP_FILE = "verified.json"  # in the cache dir: path -> [size, mtime_ns, sha256]
DOWNLOAD_TIMEOUT_S = 10.0


def cache_root() -> Path:
    """The user cache directory of the project (honours XDG_CACHE_HOME)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shape-search"


def candidate_dirs(name: str, data_dir: str | os.PathLike | None) -> list[Path]:
    """Directories to look in, in order. An explicit data_dir must exist (DataError)."""
    roots: list[Path] = []
    if data_dir is not None:
        root = Path(data_dir).expanduser()
        if not root.is_dir():
            raise DataError(f"data directory '{data_dir}' does not exist")
        roots.append(root)
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        roots.append(Path(env).expanduser())
    roots.append(cache_root())
    out: list[Path] = []
    for root in roots:
        for d in (root, root / name):
            if d not in out:
                out.append(d)
    return out


def find_file(directory: Path, name: str) -> Path | None:
    """`name.gz` or raw `name` in directory, gz first; None when neither exists."""
    for candidate in (directory / f"{name}.gz", directory / name):
        if candidate.is_file():
            return candidate
    return None


def find_all(dirs: Iterable[Path], names: Iterable[str]) -> dict[str, Path] | None:
    """The first directory holding every one of `names` (gz or raw): name -> path."""
    names = list(names)
    for d in dirs:
        found = {n: find_file(d, n) for n in names}
        if all(found.values()):
            return found  # type: ignore[return-value]
    return None


def _stamp_key(path: Path) -> tuple[str, list]:
    st = path.stat()
    return str(path.resolve()), [st.st_size, st.st_mtime_ns]


def _read_stamps() -> dict:
    try:
        return json.loads((cache_root() / STAMP_FILE).read_text())
    except (OSError, ValueError):
        return {}


def is_verified(path: Path, sha256: str) -> bool:
    """True when a stamp says this exact file (path, size, mtime) had this checksum."""
    try:
        key, sig = _stamp_key(path)
    except OSError:
        return False
    return _read_stamps().get(key) == sig + [sha256]


def mark_verified(path: Path, sha256: str) -> None:
    """Remember a verified file; best effort (a read-only cache just means re-hashing)."""
    try:
        key, sig = _stamp_key(path)
        stamps = _read_stamps()
        stamps[key] = sig + [sha256]
        root = cache_root()
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f"{STAMP_FILE}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(stamps, indent=1, sort_keys=True))
        os.replace(tmp, root / STAMP_FILE)
    except OSError:
        pass


def verify(path: Path, data: bytes, sha256: str) -> None:
    """Check the SHA-256 of a file's uncompressed bytes, skipping files stamped before."""
    if is_verified(path, sha256):
        return
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        raise DataError(f"{path} is corrupt: SHA-256 of its contents is {got[:12]}..., expected {sha256[:12]}...")
    mark_verified(path, sha256)


def download(url: str, dest: Path, timeout: float = DOWNLOAD_TIMEOUT_S) -> None:
    """Fetch `url` to `dest` (written to dest.part, then renamed). Raises on any failure."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(part, "wb") as f:
            shutil.copyfileobj(resp, f)
        os.replace(part, dest)
    finally:
        part.unlink(missing_ok=True)
