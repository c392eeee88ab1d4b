"""Where a study's weights are kept: an artifact store opened from a URL.

The stores are Optuna's (`optuna.artifacts`): a folder (`FileSystemArtifactStore`), an
S3 bucket (`Boto3ArtifactStore`, with `s3://BUCKET/PREFIX`; credentials and an
S3-compatible endpoint come from boto3's own settings, e.g. `AWS_ENDPOINT_URL`) or a
Google Cloud Storage bucket (`GCSArtifactStore`, with `gs://BUCKET/PREFIX`; credentials
come from google-cloud-storage's own settings, Application Default Credentials, and an
emulator from `STORAGE_EMULATOR_HOST`). By
default the folder is beside the SQLite file of the database: `runs.db` keeps its weights
in `runs-artifacts/`. A database that is not a file (PostgreSQL, a SQLite database in
memory) needs `--artifacts URL`, or `--keep none`.

`search run --keep` (`KEEP`): `pareto` (the default) keeps the weights of the trials on
their family's Pareto front (per trial, or their configuration's: search/artifacts/keep.py),
`all` every complete trial's, `none` none.
"""

from __future__ import annotations

import functools
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import UserError, one_line

KEEP = ("pareto", "all", "none")
DEFAULT_KEEP = "pareto"
ARTIFACTS_SUFFIX = "-artifacts"  # runs.db -> runs-artifacts/
BUCKET_SCHEMES = ("s3", "gs")  # Amazon S3 (boto3), Google Cloud Storage (google-cloud-storage)
_BUCKETS = "s3://BUCKET/PREFIX or gs://BUCKET/PREFIX"


def check_keep(keep: Any) -> str:
    if keep not in KEEP:
        raise UserError(f"unknown --keep {keep!r}; known: {', '.join(KEEP)}")
    return str(keep)


def normalize(url: str) -> str:
    """An artifact store URL as recorded: a folder as an absolute path (`file://` or a
    plain path), `s3://BUCKET[/PREFIX]` or `gs://BUCKET[/PREFIX]` as given (no trailing
    slash); UserError for any other scheme."""
    text = str(url).strip()
    if not text:
        raise UserError(f"--artifacts needs a folder, {_BUCKETS}")
    if text.startswith("file://"):
        text = text[len("file://") :]
    if "://" not in text:
        return os.path.abspath(os.path.expanduser(text))
    scheme = text.split("://", 1)[0]
    if scheme not in BUCKET_SCHEMES:
        raise UserError(f"--artifacts {text!r}: unknown scheme {scheme!r}; use a folder, {_BUCKETS}")
    bucket = text[len(scheme) + 3 :].split("/", 1)[0]
    if not bucket:
        raise UserError(f"--artifacts {text!r} names no bucket; use {scheme}://BUCKET/PREFIX")
    return text.rstrip("/")


def default_location(storage_url: str) -> str:
    """The folder beside a SQLite database file: `<dir>/<stem>-artifacts`."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(storage_url)
    except Exception as e:
        raise UserError(f"cannot read the storage URL {storage_url!r}: {one_line(e)}") from e
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        shown = parsed.render_as_string(hide_password=True)
        raise UserError(
            f"the database {shown} is not a file, so its weights have no folder beside it: "
            f"give --artifacts FOLDER, {_BUCKETS}, or --keep none"
        )
    path = Path(os.path.abspath(os.path.expanduser(database)))
    return str(path.with_name(path.stem + ARTIFACTS_SUFFIX))


def weights_location(keep: str, artifacts: str | None, storage_url: str | None) -> str | None:
    """The store a study writes its weights to: None with `--keep none`, or when there is
    neither `--artifacts` nor a database URL to put the folder beside (an in-memory store
    of the tests); else the normalised URL."""
    if check_keep(keep) == "none":
        return None
    if artifacts is not None:
        return normalize(artifacts)
    return default_location(storage_url) if storage_url is not None else None


@dataclass(frozen=True)
class Location:
    """An opened artifact store: Optuna's store and the prefix of every key in it."""

    url: str
    store: Any  # an optuna.artifacts store
    prefix: str = ""

    def write(self, key: str, data: bytes) -> None:
        self.store.write(self.prefix + key, io.BytesIO(data))

    def read(self, key: str) -> bytes:
        """The file's bytes; UserError when it is missing or the store cannot be read."""
        from optuna.artifacts.exceptions import ArtifactNotFound

        try:
            reader: BinaryIO = self.store.open_reader(self.prefix + key)
            try:
                return reader.read()
            finally:
                reader.close()
        except ArtifactNotFound as e:
            raise UserError(f"the weights file {key!r} is missing from the artifact store {self.url}") from e
        except Exception as e:
            raise UserError(f"the artifact store {self.url} cannot be read: {one_line(e, with_type=True)}") from e

    def remove(self, key: str) -> None:
        """Delete a file; one that is already gone is no error."""
        try:
            self.store.remove(self.prefix + key)
        except Exception as e:
            if not _is_not_found(e):
                raise


def open_location(url: str, *, create: bool = False) -> Location:
    """The store at `url` (see `normalize`), checked to be reachable: a folder that exists
    (made with `create`), a bucket that answers. UserError (one line) otherwise."""
    url = normalize(url)
    if url.startswith("s3://"):
        return _open_s3(url)
    if url.startswith("gs://"):
        return _open_gcs(url)
    folder = Path(url)
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot make the artifact folder {url}: {one_line(e)}") from e
    if not folder.is_dir():
        raise UserError(f"the artifact folder {url} does not exist")
    from optuna.artifacts import FileSystemArtifactStore

    return Location(url, FileSystemArtifactStore(folder))


@functools.lru_cache(maxsize=8)
def _open_s3(url: str) -> Location:
    """An S3 bucket (one client per URL and process), checked with HEAD bucket."""
    try:
        import boto3
        from optuna.artifacts import Boto3ArtifactStore
    except ImportError as e:
        raise UserError(f"--artifacts {url} needs boto3 (pip install boto3)") from e
    bucket, _, prefix = url[len("s3://") :].partition("/")
    try:
        client = boto3.client("s3")
        client.head_bucket(Bucket=bucket)
    except Exception as e:
        raise UserError(f"the artifact store {url} cannot be reached: {one_line(e, with_type=True)}") from e
    return Location(url, Boto3ArtifactStore(bucket, client=client), f"{prefix}/" if prefix else "")


@functools.lru_cache(maxsize=8)
def _open_gcs(url: str) -> Location:
    """A Google Cloud Storage bucket (one client per URL and process), checked by listing at
    most one object under the prefix (storage.objects.list, which the object roles grant;
    a bucket that does not exist answers 404)."""
    try:
        from google.cloud import storage
        from google.cloud.storage.retry import DEFAULT_RETRY
        from optuna.artifacts import GCSArtifactStore
        from optuna.exceptions import ExperimentalWarning
    except ImportError as e:
        raise UserError(f"--artifacts {url} needs google-cloud-storage (pip install google-cloud-storage)") from e
    bucket, _, prefix = url[len("gs://") :].partition("/")
    retry = getattr(DEFAULT_RETRY, "with_timeout", DEFAULT_RETRY.with_deadline)(15.0)  # not the default 120 s
    try:
        client = storage.Client()
        next(
            iter(
                client.list_blobs(
                    bucket, prefix=f"{prefix}/" if prefix else None, max_results=1, timeout=15.0, retry=retry
                )
            ),
            None,
        )
        with warnings.catch_warnings():  # experimental in Optuna since 3.4
            warnings.simplefilter("ignore", ExperimentalWarning)
            store = GCSArtifactStore(bucket, client=client)
    except Exception as e:
        raise UserError(f"the artifact store {url} cannot be reached: {one_line(e, with_type=True)}") from e
    return Location(url, store, f"{prefix}/" if prefix else "")


def _is_not_found(e: BaseException) -> bool:
    """A file that is not in the store: Optuna's ArtifactNotFound, or the 404 that
    GCSArtifactStore.remove lets through from google-cloud-storage."""
    from optuna.artifacts.exceptions import ArtifactNotFound

    if isinstance(e, ArtifactNotFound):
        return True
    try:
        from google.api_core.exceptions import NotFound
    except ImportError:
        return False
    return isinstance(e, NotFound)
