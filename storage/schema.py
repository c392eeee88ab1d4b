"""The database schema (SQLAlchemy 2 declarative models).

Only `storage/` imports this module; the rest of the app sees the dataclasses of
`storage.records`. Changing a table here needs a new migration in
`storage/migrations/versions/` (the test suite checks that the two agree).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from core.directions import DIRECTIONS
from core.statuses import TRIAL_STATUSES

# Key dimensions copied from a trial's config into their own columns (for quick SQL):
# every registered family's `key_dims` (a test checks the registry against this list):
# the MLP families' (0001), the transformer, mixer, Han and L-MLP families' (0002), and
# the diffusion backbones' float `mlp_ratio` (0005). A new key dim needs a migration.
INT_DIM_COLUMNS: tuple[str, ...] = (
    "d_z",
    "d_h",
    "L",
    "d_model",
    "K",
    "n_heads",
    "S",
    "C",
    "patch",
    "depth",
    "D",
    "width",
)
FLOAT_DIM_COLUMNS: tuple[str, ...] = ("mlp_ratio",)
DIM_COLUMNS: tuple[str, ...] = INT_DIM_COLUMNS + FLOAT_DIM_COLUMNS

# JSON whose Python None is SQL NULL (not the JSON text 'null').
JSONData = JSON(none_as_null=True)

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite stores naive UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime}


class Study(Base):
    __tablename__ = "studies"
    __table_args__ = (CheckConstraint(_in("direction", DIRECTIONS), name="direction"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    task: Mapped[str] = mapped_column(String(255))
    families: Mapped[list[Any]] = mapped_column(JSONData)
    metric: Mapped[str] = mapped_column(String(128))
    direction: Mapped[str] = mapped_column(String(16))
    budget: Mapped[int] = mapped_column(BigInteger)
    settings: Mapped[dict[str, Any]] = mapped_column(JSONData)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Trial(Base):
    __tablename__ = "trials"
    __table_args__ = (
        UniqueConstraint("study_id", "number"),
        CheckConstraint(_in("status", TRIAL_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    study_id: Mapped[int] = mapped_column(ForeignKey("studies.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    family: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    params: Mapped[int] = mapped_column(BigInteger)
    config: Mapped[dict[str, Any]] = mapped_column(JSONData)
    d_z: Mapped[int | None] = mapped_column(Integer)
    d_h: Mapped[int | None] = mapped_column(Integer)
    L: Mapped[int | None] = mapped_column(Integer)
    d_model: Mapped[int | None] = mapped_column(Integer)
    K: Mapped[int | None] = mapped_column(Integer)
    n_heads: Mapped[int | None] = mapped_column(Integer)
    S: Mapped[int | None] = mapped_column(Integer)
    C: Mapped[int | None] = mapped_column(Integer)
    patch: Mapped[int | None] = mapped_column(Integer)
    depth: Mapped[int | None] = mapped_column(Integer)
    D: Mapped[int | None] = mapped_column(Integer)
    width: Mapped[int | None] = mapped_column(Integer)
    mlp_ratio: Mapped[float | None] = mapped_column(Float)  # 0005
    # 0003: who runs a trial ("host:pid:token"), its last sign of life, and retry chains.
    owner: Mapped[str | None] = mapped_column(String(255))
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    attempt: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    retry_of: Mapped[int | None] = mapped_column(Integer)  # number of the trial this one retries
    # 0009: the call that added the row, so that a retried write finds it (storage/waiting.py)
    token: Mapped[str | None] = mapped_column(String(32), unique=True, index=True)
    objective: Mapped[float | None] = mapped_column(Float)
    seeds: Mapped[list[Any]] = mapped_column(JSONData)
    optuna: Mapped[dict[str, Any] | None] = mapped_column(JSONData)
    note: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    traceback: Mapped[str | None] = mapped_column(Text)
    device: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    duration_s: Mapped[float | None] = mapped_column(Float)


class TrialMetric(Base):
    """One aggregated metric of a finished trial (mean, sample std, number of runs)."""

    __tablename__ = "trial_metrics"
    __table_args__ = (UniqueConstraint("trial_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("trials.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(128))
    mean: Mapped[float | None] = mapped_column(Float)
    std: Mapped[float | None] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer)


class Run(Base):
    """One seed of one trial: of the search (`retraining` 0) or of the trial's retraining
    number `retraining` (0008: `search train`, see `Retraining`)."""

    __tablename__ = "runs"
    __table_args__ = (UniqueConstraint("trial_id", "retraining", "repeat"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("trials.id", ondelete="CASCADE"))
    retraining: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  # 0008
    repeat: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    best_epoch: Mapped[int | None] = mapped_column(Integer)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSONData)
    duration_s: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)


class Epoch(Base):
    """Validation metrics after one epoch of one run."""

    __tablename__ = "epochs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    epoch: Mapped[int] = mapped_column(Integer)
    train_loss: Mapped[float | None] = mapped_column(Float)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSONData)
    elapsed_s: Mapped[float | None] = mapped_column(Float)


class RunArtifact(Base):
    """A file one run produced (0004), e.g. the PNG grid of a diffusion model's samples:
    base64 text, kept out of `runs` so SQL over runs stays light. Or (0007) a file kept in
    an artifact store, e.g. the model's weights: no `data`, but the store's URL, the
    file's key in it, its size and sha256; `removed_at` when the file was deleted from
    the store (`search run --keep pareto`: its trial fell off its family's front)."""

    __tablename__ = "run_artifacts"
    __table_args__ = (UniqueConstraint("run_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    media_type: Mapped[str] = mapped_column(String(128))
    data: Mapped[str | None] = mapped_column(Text)
    store: Mapped[str | None] = mapped_column(String(1024))  # 0007
    store_key: Mapped[str | None] = mapped_column(String(1024))
    size: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    removed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Retraining(Base):
    """A trial's configuration trained again (0008, `search train`): number k (1, 2, ...
    per trial), its settings (epochs, seeds, recipe, training settings), status and
    aggregated test metrics (name -> {mean, std, n}). Its runs are the `runs` rows with
    `retraining = k` (with their epochs and artifacts); the search's own rows (trial
    metrics, runs with `retraining = 0`) never change. Stored in one transaction when it
    ends, so a killed retraining leaves no row."""

    __tablename__ = "retrainings"
    __table_args__ = (
        UniqueConstraint("trial_id", "number"),
        CheckConstraint(_in("status", TRIAL_STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("trials.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    settings: Mapped[dict[str, Any]] = mapped_column(JSONData)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSONData)
    device: Mapped[str | None] = mapped_column(String(64))
    error: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    duration_s: Mapped[float | None] = mapped_column(Float)
    token: Mapped[str | None] = mapped_column(String(32), unique=True, index=True)  # 0009, as trials.token
