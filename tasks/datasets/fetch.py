"""Where data sets live, checksum verification (cached) and downloading.

Search order for a data set named NAME (e.g. "mnist"): the explicit `data_dir`, then the
environment variable SEARCH_DATA_DIR, then the user cache directory
($XDG_CACHE_HOME or ~/.cache)/shape-search. In each, the files may lie directly in the
directory or in its NAME/ subdirectory. Downloads go to the cache's NAME/ directory.

A download (`download`, `fetch_remote`) streams to a temporary file and renames it when
complete; a body shorter than its Content-Length, a checksum mismatch or any network error
leaves no file behind. A data set of several files (or an archive to unpack) is built in a
temporary folder beside its own (`staged`) and moved into place only when whole. Progress
goes to stderr: a bar on a terminal, else one line when a download starts and one when it ends.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from core.errors import DataError, one_line
from tasks.datasets.sources import Remote

ENV_DATA_DIR = "SEARCH_DATA_DIR"
STAMP_FILE = "verified.json"  # in the cache dir: path -> [size, mtime_ns, sha256]
DOWNLOAD_TIMEOUT_S = 10.0


def cache_root() -> Path:
    """The user cache directory of the project (honours XDG_CACHE_HOME)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shape-search"


def search_roots(data_dir: str | os.PathLike | None) -> list[tuple[str, Path]]:
    """The data directories in search order, each with where it comes from ("--data-dir",
    "$SEARCH_DATA_DIR", "cache"). An explicit data_dir must exist (DataError)."""
    roots: list[tuple[str, Path]] = []
    if data_dir is not None:
        root = Path(data_dir).expanduser()
        if not root.is_dir():
            raise DataError(f"data directory '{data_dir}' does not exist")
        roots.append(("--data-dir", root))
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        roots.append((f"${ENV_DATA_DIR}", Path(env).expanduser()))
    roots.append(("cache", cache_root()))
    return roots


def candidate_dirs_from(name: str, data_dir: str | os.PathLike | None) -> list[tuple[str, Path]]:
    """(origin, directory) pairs to look in, in order: each root and its NAME/ folder."""
    out: list[tuple[str, Path]] = []
    for origin, root in search_roots(data_dir):
        for d in (root, root / name):
            if d not in [p for _, p in out]:
                out.append((origin, d))
    return out


def candidate_dirs(name: str, data_dir: str | os.PathLike | None) -> list[Path]:
    """Directories to look in, in order. An explicit data_dir must exist (DataError)."""
    return [d for _, d in candidate_dirs_from(name, data_dir)]


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


CHUNK = 1 << 20  # bytes read at a time


def format_bytes(n: float | None) -> str:
    """'170.5 MB', '1.1 MB', '832 bytes' (decimal units); '?' when unknown."""
    if n is None:
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} bytes"


class _Progress:
    """A download's progress on stderr: a tqdm bar on a terminal; in a log, a line when it
    starts and one when it ends."""

    def __init__(self, url: str, dest: Path, total: int | None) -> None:
        self.url, self.dest, self.total, self.done, self.t0 = url, dest, total, 0, time.monotonic()
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="B", unit_scale=True, desc=dest.name, file=sys.stderr, leave=False)
        else:
            print(f"downloading {url} ({format_bytes(total)}) to {dest.parent}", file=sys.stderr, flush=True)

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def close(self, ok: bool) -> None:
        if self.bar is not None:
            self.bar.close()
        if ok:
            print(
                f"downloaded {self.dest.name}: {format_bytes(self.done)} in {time.monotonic() - self.t0:.1f} s",
                file=sys.stderr,
                flush=True,
            )


def download(url: str, dest: Path, timeout: float = DOWNLOAD_TIMEOUT_S) -> None:
    """Fetch `url` to `dest`: streamed to a temporary file beside it (NAME.PID.part), renamed
    when complete. Raises OSError on any failure (also when fewer bytes came than the
    Content-Length said); no file is left behind."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(f"{dest.name}.{os.getpid()}.part")
    progress = None
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "shape-search"})
        with urllib.request.urlopen(request, timeout=timeout) as resp, open(part, "wb") as f:
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.strip().isdigit() else None
            progress = _Progress(url, dest, total)
            while chunk := resp.read(CHUNK):
                f.write(chunk)
                progress.update(len(chunk))
            if total is not None and progress.done != total:
                raise OSError(f"interrupted: got {progress.done:,} of {total:,} bytes")
        os.replace(part, dest)
        progress.close(ok=True)
        progress = None
    except (http.client.HTTPException, ValueError) as e:  # a broken response; a malformed URL
        raise OSError(one_line(e, with_type=True)) from None
    finally:
        if progress is not None:
            progress.close(ok=False)
        part.unlink(missing_ok=True)


def file_sha256(path: Path, gunzipped: bool = False) -> str:
    """The SHA-256 of a file's bytes (of its gunzipped bytes with `gunzipped`), streamed."""
    h = hashlib.sha256()
    try:
        with gzip.open(path, "rb") if gunzipped else open(path, "rb") as f:
            while block := f.read(CHUNK):
                h.update(block)
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(f"cannot read {path}: {one_line(e)}") from None
    return h.hexdigest()


def fetch_remote(remote: Remote, folder: Path) -> Path:
    """Download `remote` into `folder` (its mirrors in order) and check its SHA-256.
    OSError when every mirror failed; DataError (the file removed) on a checksum mismatch."""
    dest = folder / remote.name
    errors: list[str] = []
    for url in remote.urls:
        try:
            download(url, dest)
            break
        except OSError as e:  # any network/IO failure: try the next mirror
            errors.append(f"{url}: {one_line(e)}")
    else:
        raise OSError("; ".join(dict.fromkeys(errors)))
    try:
        got = file_sha256(dest, gunzipped=remote.checks == "content")
    except DataError:
        got = "unreadable"
    if got != remote.sha256:
        dest.unlink(missing_ok=True)
        raise DataError(
            f"downloaded {remote.name} does not match its SHA-256; removed it (got {got[:12]}..., "
            f"expected {remote.sha256[:12]}...)"
        )
    return dest


@contextlib.contextmanager
def staged(folder: Path) -> Iterator[Path]:
    """A temporary folder beside `folder` to build a data set in. When the block ends
    normally its files move into `folder` (the whole folder in one rename when `folder`
    does not exist yet); on any error it is removed, and so are `folder` and its parents
    if they were created for it and are empty."""
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".partial", dir=folder.parent))
    ok = False
    try:
        yield tmp
        try:
            os.rename(tmp, folder)
        except OSError:  # the folder exists (e.g. holding some of the files): file by file
            folder.mkdir(parents=True, exist_ok=True)
            for p in sorted(tmp.iterdir()):
                os.replace(p, folder / p.name)
        ok = True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if not ok:
            for p in created:  # deepest first
                with contextlib.suppress(OSError):
                    p.rmdir()
