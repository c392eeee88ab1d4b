"""Where each data set of tasks/datasets/sources.py is, and fetching one ahead of a run.

    locate(name, data_dir) -> Location      present or not; where (which directory of the
                                            search order); its size
    fetch_data_set(name, data_dir) -> Location   download it unless it is found already
    fetch_first(names, data_dir) -> Location     the same for a task's data sets (first found wins)
    how_to_get(name) -> str                 one line: downloads on first use, bundled, or by hand

`search data` (search/cli/data.py) prints these for every task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.errors import DataError, UserError, one_line
from tasks.datasets import cifar10, fetch, mnist, sources, text

# name -> installer(root) -> the folder or file it wrote (under root/<folder>/).
INSTALLERS: dict[str, Callable[[Path], Path]] = {
    "mnist": mnist.install,
    "cifar10": cifar10.install,
    "tiny-shakespeare": text.install_tiny_shakespeare,
}


@dataclass(frozen=True)
class Location:
    """Where a data set was found: `directory` None when it is absent (or has no files)."""

    name: str
    present: bool
    directory: Path | None = None
    origin: str = ""  # "--data-dir", "$SEARCH_DATA_DIR", "cache"; "" when absent
    size: int | None = None  # bytes of its files when present, else what a download takes (about)

    def where(self) -> str:
        return f"{self.directory} ({self.origin})" if self.directory is not None else "-"


def data_set(name: str) -> sources.DataSet:
    """The data set `name`; a one-line UserError naming the known ones."""
    try:
        return sources.get(name)
    except KeyError:
        raise UserError(f"unknown data set {name!r}; known: {', '.join(sources.DATASETS)}") from None


def locate(name: str, data_dir: str | None = None) -> Location:
    """The first directory of the search order holding every file of data set `name`."""
    ds = data_set(name)
    if ds.bundled:
        return Location(name, True)
    return _locate_in(ds, fetch.candidate_dirs_from(ds.folder, data_dir))


def _locate_in(ds: sources.DataSet, dirs: list[tuple[str, Path]]) -> Location:
    name = ds.name
    for origin, d in dirs:
        found = [fetch.find_file(d, n) for n in ds.files]
        if all(found):
            extra = [p for p in (fetch.find_file(d, n) for n in ds.optional) if p is not None]
            size = sum(p.stat().st_size for p in (*found, *extra))  # type: ignore[union-attr]
            return Location(name, True, d, origin, size)
    return Location(name, False, size=ds.download_bytes or ds.unpacked_bytes)


def how_to_get(name: str) -> str:
    """One line: how this data set comes (for `search data`)."""
    ds = data_set(name)
    if ds.bundled:
        return ds.bundled
    if ds.downloadable:
        return f"downloads on first use (or: search data fetch {name})"
    return f"by hand: {ds.manual}"


def fetch_data_set(name: str, data_dir: str | None = None) -> Location:
    """Make data set `name` present. Without data_dir: nothing to do when it is found in
    the search order, else it is downloaded into the cache's <folder>/. With data_dir (which
    must exist): only data_dir and data_dir/<folder>/ count, and it is downloaded into the
    latter (to prepare a shared data folder). DataError (one line) when it cannot be
    downloaded or the download fails; a failed download leaves nothing behind."""
    ds = data_set(name)
    found = _present_for_fetch(ds, data_dir)
    if found.present:
        return found
    root = fetch.search_roots(data_dir)[0][1] if data_dir is not None else fetch.cache_root()
    if not ds.downloadable:
        raise DataError(f"{ds.title} is not downloaded: {ds.manual}; put the files in {root / ds.folder}")
    try:
        INSTALLERS[name](root)
    except OSError as e:
        raise DataError(f"{ds.title}: download failed ({one_line(e)}); nothing was kept") from None
    return _locate_in(ds, [("--data-dir" if data_dir is not None else "cache", root / ds.folder)])


def fetch_first(names: tuple[str, ...], data_dir: str | None = None) -> Location:
    """For a task that reads the first of `names` found (`Task.data_sets`): the first one
    present (as `fetch_data_set` looks), else the first downloadable one, fetched."""
    sets = [data_set(n) for n in names]
    for ds in sets:
        found = _present_for_fetch(ds, data_dir)
        if found.present:
            return found
    downloadable = [ds.name for ds in sets if ds.downloadable]
    return fetch_data_set(downloadable[0] if downloadable else names[0], data_dir)


def _present_for_fetch(ds: sources.DataSet, data_dir: str | None) -> Location:
    """Without data_dir the whole search order; with it, data_dir and its <folder>/ only."""
    if ds.bundled:
        return Location(ds.name, True)
    if data_dir is None:
        return locate(ds.name)
    root = fetch.search_roots(data_dir)[0][1]
    return _locate_in(ds, [("--data-dir", root), ("--data-dir", root / ds.folder)])
