"""Recipes: each paper experiment as a named TOML file (`search recipes`,
`search run --recipe NAME`).

A recipe file in this folder (or any path ending in .toml) holds:

    description = "one line for `search recipes`"
    paper = "the paper and the figure or table it reproduces"
    claim = "what the paper reports, in one sentence"
    [run]                     # `search run` flags (dashes or underscores), e.g.
    space = "hourglass,conventional"
    task = "mnist-denoise"
    budget = "80M"
    trials = 200
    epochs = 30
    ema = 0.9999              # optional: an EMA of the weights (default 0: off); ema_warmup = true
    space_file = "spaces/liao-fixed-heads.toml"   # optional, relative to the recipe file
    [task_options]            # as --task-option KEY=VALUE
    noise = 0.25

Every paper-scale recipe NAME has a NAME-small twin that finishes on a 2-core CPU within
30 minutes. Flags given on the command line override the recipe's values.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError, one_line

RECIPE_DIR = Path(__file__).resolve().parent

# The `search run` settings a recipe may set: key -> accepted Python types.
RUN_KEYS: dict[str, tuple[type, ...]] = {
    "space": (str,),
    "task": (str,),
    "budget": (str, int),
    "budget_of": (str,),
    "trials": (int,),
    "repeats": (int,),
    "sampler": (str,),
    "spread": (str,),
    "share": (str,),
    "sampler_scope": (str,),
    "corners": (str,),
    "size_scale": (str,),
    "start": (str,),
    "pruner": (str,),
    "shape_draw": (str,),
    "revisit": (str,),
    "prune_grace": (float,),
    "seed_checks": (float, int),
    "seed_check_order": (str,),
    "decide": (str,),
    "margin": (float, int),
    "seed": (int,),
    "epochs": (int,),
    "batch_size": (int,),
    "optimizer": (str,),
    "lr": (float, int),
    "max_train_samples": (int,),
    "tokens": (int,),
    "ema": (float, int),
    "ema_warmup": (bool,),
    "space_file": (str,),
    "retries": (int,),
    "executor": (str,),
    "study": (str,),
}
TOP_KEYS = {"description", "paper", "claim", "run", "task_options"}


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    paper: str
    claim: str
    run: dict[str, Any]  # RUN_KEYS -> value; space_file made absolute
    task_options: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @property
    def version(self) -> str | None:
        """The first 12 hex digits of the SHA-256 of the recipe's file and its space file:
        a study records it, so a later change to the recipe shows (None: no file)."""
        if self.path is None:
            return None
        import hashlib

        digest = hashlib.sha256(self.path.read_bytes())
        space = self.run.get("space_file")
        if space and Path(space).is_file():
            digest.update(Path(space).read_bytes())
        return digest.hexdigest()[:12]


def recipe_names() -> list[str]:
    return sorted(p.stem for p in RECIPE_DIR.glob("*.toml"))


def load_recipe(name: str) -> Recipe:
    """A recipe by name (a file of this folder) or by path to a .toml file."""
    path = Path(name)
    if path.suffix != ".toml":
        path = RECIPE_DIR / f"{name}.toml"
        if not path.is_file():
            raise UserError(f"unknown recipe {name!r}; known: {', '.join(recipe_names())} (see 'search recipes')")
    elif not path.is_file():
        raise UserError(f"recipe file {name!r} not found")
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeError, OSError) as e:
        raise UserError(f"malformed recipe {str(path)!r}: {one_line(e)}") from None
    return parse_recipe(path.stem, data, path)


def parse_recipe(name: str, data: dict[str, Any], path: Path | None = None) -> Recipe:
    def bad(msg: str) -> UserError:
        return UserError(f"recipe {name!r}: {msg}")

    extra = sorted(set(data) - TOP_KEYS)
    if extra:
        raise bad(f"unknown key(s) {', '.join(extra)}; a recipe has {', '.join(sorted(TOP_KEYS))}")
    for key in ("description", "paper", "claim"):
        if not isinstance(data.get(key, ""), str):
            raise bad(f"{key} must be a string")
    if not data.get("description"):
        raise bad("needs a one-line description")
    run = data.get("run")
    if not isinstance(run, dict):
        raise bad("needs a [run] table with at least space and budget")
    run = {k.replace("-", "_"): v for k, v in run.items()}
    unknown = sorted(set(run) - set(RUN_KEYS))
    if unknown:
        raise bad(f"[run] has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(RUN_KEYS))}")
    for k, v in run.items():
        if (isinstance(v, bool) and bool not in RUN_KEYS[k]) or not isinstance(v, RUN_KEYS[k]):
            raise bad(f"[run] {k} must be {' or '.join(t.__name__ for t in RUN_KEYS[k])}, got {v!r}")
    for k in ("space", "budget"):
        if k not in run:
            raise bad(f"[run] needs {k}")
    if "space_file" in run:
        base = path.parent if path is not None else RECIPE_DIR
        run["space_file"] = str((base / run["space_file"]).resolve())
    options = data.get("task_options", {})
    if not isinstance(options, dict):
        raise bad("[task_options] must be a table")
    return Recipe(name, data["description"], data.get("paper", ""), data.get("claim", ""), run, dict(options), path)
