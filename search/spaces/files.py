"""Space files (`--space-file`, TOML or YAML): per family, overrides of the default
space's keys and optionally its search constraints; `build_spaces` puts the defaults,
the task's learning rates and a file's overrides together.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from core.errors import UserError, one_line
from core.io import IOSpec
from core.shape_rules import Constraint
from search.spaces.defaults import default_space
from search.spaces.space import Condition, Dim, Space

RANGE_KEYS = {"low", "high", "log", "grid", "step"}
COMMON_KEYS = {"size", "if"}  # a size override and a condition, on ranges and choices alike


def parse_dim(name: str, spec: Any) -> Dim:
    """A space-file entry: a list of choices, a scalar, {low, high, log, grid, step} (a
    range) or {choices} (a list); either table may add `size` (true: a size dimension,
    false: a free one, whatever counting says) and `if` ('PARENT OP VALUE': the dimension
    exists only when that holds, e.g. 'depth >= 3')."""
    if isinstance(spec, list):
        return Dim(name, "choice", choices=tuple(spec))
    if isinstance(spec, (bool, int, float, str)):
        return Dim(name, "choice", choices=(spec,))
    if isinstance(spec, dict):
        common = {"size": spec.get("size"), "when": parse_condition(name, spec["if"]) if "if" in spec else None}
        if "choices" in spec:
            extra = set(spec) - COMMON_KEYS - {"choices"}
            if extra or not isinstance(spec["choices"], (list, tuple)):
                raise UserError(
                    f"{name}: a choice table needs a list 'choices' (optional size, if); got {sorted(spec)}"
                )
            return Dim(name, "choice", choices=tuple(spec["choices"]), **common)
        extra = set(spec) - RANGE_KEYS - COMMON_KEYS
        if extra or "low" not in spec or "high" not in spec:
            raise UserError(
                f"{name}: a range needs low and high (optional log, grid, step, size, if); got {sorted(spec)}"
            )
        lo, hi = spec["low"], spec["high"]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi)):
            raise UserError(f"{name}: low and high must be numbers")
        kind = "int" if isinstance(lo, int) and isinstance(hi, int) else "float"
        grid = spec.get("grid", ())
        if not isinstance(grid, (list, tuple)):
            raise UserError(f"{name}: grid must be a list")
        return Dim(
            name, kind, lo, hi, log=bool(spec.get("log", False)), grid=tuple(grid), step=spec.get("step", 1), **common
        )
    raise UserError(f"{name}: expected a list, a value or a {{low, high}} table, got {type(spec).__name__}")


def parse_condition(name: str, text: Any) -> Condition:
    """'PARENT OP VALUE' (OP one of ==, !=, <, <=, >, >=; VALUE a number, true/false or a
    word, quoted or not), e.g. 'depth >= 3' or "optimizer == 'sgd'"."""
    import re

    m = re.fullmatch(r"\s*(\w+)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*", str(text)) if isinstance(text, str) else None
    if m is None:
        raise UserError(f"{name}: 'if' must be 'PARENT OP VALUE' (OP one of ==, !=, <, <=, >, >=), got {text!r}")
    parent, op, raw = m.groups()
    return Condition(parent, op, _literal(raw))


def _literal(raw: str) -> Any:
    if raw[:1] in "'\"" and raw[-1:] == raw[:1] and len(raw) >= 2:
        return raw[1:-1]
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def parse_dims(name: str, spec: Any, earlier: tuple[Dim, ...] = ()) -> tuple[Dim, ...]:
    """The dimensions of one entry of a space dict: one, or with `"per": PARENT` (PARENT an
    earlier integer range such as a depth) one per layer, NAME_1 ... NAME_H for the parent's
    highest value H, NAME_i present when PARENT >= i: Optuna's per-layer
    `[trial.suggest_int(f"n_units_l{i}", ...) for i in range(n_layers)]` as a space."""
    if not (isinstance(spec, dict) and "per" in spec):
        return (parse_dim(name, spec),)
    parent = next((d for d in earlier if d.name == spec["per"]), None)
    if parent is None or parent.kind != "int":
        raise UserError(f"{name}: 'per' must name an earlier integer range (a depth), got {spec['per']!r}")
    if "if" in spec:
        raise UserError(f"{name}: a per-layer entry takes its condition from 'per'; drop 'if'")
    one = {k: v for k, v in spec.items() if k != "per"}
    out = []
    for i in range(1, int(parent.high) + 1):
        dim = parse_dim(f"{name}_{i}", one)
        if i > parent.low:
            dim = replace(dim, when=Condition(parent.name, ">=", i))
        out.append(dim)
    return tuple(out)


CONSTRAINTS_KEY = "constraints"  # a space file's list of search constraints for a family


def parse_constraint(text: Any) -> Constraint:
    """'LEFT OP [SCALE *] RIGHT', e.g. 'L >= 0.004 * d_model' or 'd_h < d_model'."""
    import re

    m = re.fullmatch(r"\s*(\w+)\s*(<=|>=|<|>)\s*(?:([0-9.eE+-]+)\s*\*\s*)?(\w+)\s*", str(text))
    if not isinstance(text, str) or m is None:
        raise UserError(f"constraint {text!r}: expected 'LEFT OP [SCALE *] RIGHT' with OP one of <, <=, >, >=")
    left, op, scale, right = m.groups()
    try:
        factor = float(scale) if scale else 1.0
    except ValueError:
        raise UserError(f"constraint {text!r}: {scale!r} is not a number") from None
    if not factor > 0:
        raise UserError(f"constraint {text!r}: the scale must be positive")
    return Constraint(left, op, right, scale=factor)  # type: ignore[arg-type]


def load_space_file(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read a TOML (.toml) or YAML (.yaml/.yml) file: one table per family, one entry per
    key to override, and optionally `constraints`, a list of 'LEFT OP [SCALE *] RIGHT'
    that replaces the space's search constraints (the family's shape rules always hold).
    Returns family -> key -> Dim (and `constraints` -> tuple of Constraint)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"space file {str(p)!r} not found")
    try:
        text = p.read_text()
        if p.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        elif p.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            raise UserError(f"space file {str(p)!r}: use a .toml, .yaml or .yml file")
    except UserError:
        raise
    except Exception as e:  # tomllib.TOMLDecodeError, yaml.YAMLError, UnicodeError
        raise UserError(f"malformed space file {str(p)!r}: {one_line(e)}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise UserError(f"malformed space file {str(p)!r}: expected one table per family")
    try:
        return {
            fam: {
                k: (tuple(parse_constraint(c) for c in _as_list(v)) if k == CONSTRAINTS_KEY else parse_dim(k, v))
                for k, v in table.items()
            }
            for fam, table in data.items()
        }
    except UserError as e:
        raise UserError(f"malformed space file {str(p)!r}: {e}") from None


def _as_list(v: Any) -> list[Any]:
    if not isinstance(v, list):
        raise UserError(f"{CONSTRAINTS_KEY} must be a list of strings, got {v!r}")
    return v


def build_spaces(
    families: list[str], io: IOSpec, space_file: str | None, lrs: tuple[float, ...] | None = None
) -> dict[str, Space]:
    """The families' default spaces on `io`, with the task's learning rates `lrs` (if any:
    `Task.search_lrs`) as every `lr` choice, then the space file's overrides."""
    overrides = load_space_file(space_file) if space_file else {}
    extra = sorted(set(overrides) - set(families))
    if extra:
        raise UserError(f"space file names {', '.join(extra)}, not searched here ({', '.join(families)})")
    out = {}
    for f in families:
        table = dict(overrides.get(f, {}))
        constraints = table.pop(CONSTRAINTS_KEY, None)
        space = default_space(f, io)
        if lrs and any(d.name == "lr" and d.kind == "choice" for d in space.dims):
            space = space.with_overrides({"lr": Dim("lr", "choice", choices=tuple(lrs))})
        space = space.with_overrides(table)
        if constraints is not None:
            space = space.with_constraints(constraints, _family_rules(f))
        out[f] = space
    return out


def _family_rules(family: str) -> tuple[Constraint, ...]:
    from models import get_family

    return tuple(get_family(family).shape_rules)
