"""Byte-level text corpora as uint8 tensors, split contiguously into train/val/test.

A named corpus is looked up like every data set (tasks/datasets/fetch.py): `--data-dir` or
its NAME/ folder, then $SEARCH_DATA_DIR, then the user cache; gz or raw. Shakespeare comes
in two corpora (tasks/datasets/sources.py), chosen by `load_shakespeare(corpus, ...)`:
  shakespeare       the 42 Gutenberg works concatenated (`shakespeare/shakespeare.txt.gz`,
                    5 MB); it has no download address, so it is only read where found
  tiny-shakespeare  char-rnn's 1.1 MB extract (`tiny-shakespeare/tiny-shakespeare.txt`),
                    downloaded into the cache when found nowhere and checked by SHA-256
  auto              the first when found, else the second (downloaded on first use)
A missing corpus (offline) is a one-line DataError saying where to put which file. Every
TextSplits records the corpus it came from (name, file, SHA-256 of its bytes).
Any UTF-8 text file can be read by path (`read_text_file`, gz or raw).
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from dataclasses import dataclass
from pathlib import Path

import torch

from core.errors import DataError, one_line
from tasks.datasets import fetch, sources

SPLIT = (0.90, 0.05, 0.05)  # contiguous train / validation / test fractions
CORPORA = ("auto", "shakespeare", "tiny-shakespeare")  # `load_shakespeare`'s choices


@dataclass
class TextSplits:
    """Byte tensors (uint8, CPU) of the three contiguous parts of a corpus."""

    train: torch.Tensor
    val: torch.Tensor
    test: torch.Tensor
    source: str  # the file it came from
    corpus: str = ""  # the data set (tasks/datasets/sources.py) it is, "" for a file given by path
    sha256: str = ""  # of the whole text

    def record(self) -> dict[str, object]:
        """What a run stores about its data: corpus, file, SHA-256 and size of the text."""
        return {"corpus": self.corpus or "file", "file": self.source, "sha256": self.sha256, "bytes": sum(self.sizes())}

    def sizes(self) -> tuple[int, int, int]:
        return len(self.train), len(self.val), len(self.test)


def _read(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
        return gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise DataError(f"cannot read {path}: {' '.join(str(e).split()) or type(e).__name__}") from None


def read_text_file(path: str | Path) -> bytes:
    """The bytes of a UTF-8 text file (gunzipped when it ends in .gz); DataError when it is
    missing, empty or not UTF-8."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(f"text file {str(path)!r} not found (give an existing UTF-8 file with --data)")
    data = _read(p)
    if not data:
        raise DataError(f"text file {str(path)!r} is empty")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"text file {str(path)!r} is not UTF-8 text (bad byte at offset {e.start})") from None
    return data


def find_corpus(name: str, filename: str, data_dir: str | None) -> Path:
    """The path of `filename` (.gz or raw) in the data directories; DataError if absent."""
    found = fetch.find_all(fetch.candidate_dirs(name, data_dir), [filename])
    if found:
        return found[filename]
    where = Path(data_dir) / name if data_dir is not None else fetch.cache_root() / name
    raise DataError(
        f"{name} corpus not found: put {filename}.gz (or {filename}) in {where} "
        f"or pass --data-dir DIR holding {name}/{filename}.gz"
    )


def split_bytes(
    data: bytes, fractions: tuple[float, float, float] = SPLIT, source: str = "", corpus: str = ""
) -> TextSplits:
    """Contiguous train/val/test parts of `data` (first 90%, next 5%, last 5%), with the
    SHA-256 of the whole text."""
    n = len(data)
    n_train = int(n * fractions[0])
    n_val = int(n * fractions[1])
    t = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    return TextSplits(
        t[:n_train].clone(),
        t[n_train : n_train + n_val].clone(),
        t[n_train + n_val :].clone(),
        source,
        corpus,
        hashlib.sha256(data).hexdigest(),
    )


def load_corpus(name: str, filename: str, data_dir: str | None) -> TextSplits:
    path = find_corpus(name, filename, data_dir)
    return split_bytes(read_text_file(path), source=str(path), corpus=name)


def load_text_file(path: str | Path) -> TextSplits:
    return split_bytes(read_text_file(path), source=str(path))


def install_tiny_shakespeare(root: Path) -> Path:
    """Download tiny-shakespeare into root/tiny-shakespeare/ and check it; the file.
    OSError when the download fails, DataError on a checksum mismatch (nothing left)."""
    remote = sources.TINY_SHAKESPEARE_REMOTE
    folder = root / "tiny-shakespeare"
    with fetch.staged(folder) as tmp:
        fetch.fetch_remote(remote, tmp)
    path = folder / remote.name
    fetch.mark_verified(path, remote.sha256)
    return path


def find_shakespeare(corpus: str, data_dir: str | None) -> tuple[str, Path]:
    """(the corpus's name, its file) for `corpus` in CORPORA: a local Gutenberg file wins
    under "auto"; tiny-shakespeare is downloaded when it is wanted and found nowhere."""
    if corpus not in CORPORA:
        raise DataError(f"corpus must be one of {', '.join(CORPORA)}, got {corpus!r}")
    gutenberg, tiny = sources.SHAKESPEARE_FILE, sources.TINY_SHAKESPEARE_FILE
    if corpus != "tiny-shakespeare":
        found = fetch.find_all(fetch.candidate_dirs("shakespeare", data_dir), [gutenberg])
        if found:
            return "shakespeare", found[gutenberg]
        if corpus == "shakespeare":
            where = (Path(data_dir) if data_dir is not None else fetch.cache_root()) / "shakespeare"
            raise DataError(
                f"Shakespeare corpus not found: put {gutenberg}.gz (or {gutenberg}) in {where} or pass "
                f"--data-dir (it has no download; corpus=tiny-shakespeare downloads char-rnn's)"
            )
    found = fetch.find_all(fetch.candidate_dirs("tiny-shakespeare", data_dir), [tiny])
    if found:
        return "tiny-shakespeare", found[tiny]
    try:
        return "tiny-shakespeare", install_tiny_shakespeare(fetch.cache_root())
    except OSError as e:
        root = Path(data_dir) if data_dir is not None else fetch.cache_root()
        put = f"{gutenberg}.gz (the Gutenberg works) in {root / 'shakespeare'}, or " if corpus == "auto" else ""
        raise DataError(
            f"Shakespeare corpus not found: put {put}{tiny} in {root / 'tiny-shakespeare'}, or pass --data-dir "
            f"(download of tiny-shakespeare failed: {one_line(e)})"
        ) from None


def load_shakespeare(corpus: str = "auto", data_dir: str | None = None) -> TextSplits:
    """The Shakespeare corpus `corpus` (CORPORA), split; tiny-shakespeare checked by SHA-256."""
    name, path = find_shakespeare(corpus, data_dir)
    data = read_text_file(path)
    if name == "tiny-shakespeare":
        fetch.verify(path, data, sources.TINY_SHAKESPEARE_REMOTE.sha256)
    return split_bytes(data, source=str(path), corpus=name)
