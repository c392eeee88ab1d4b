"""Plugin files the tests write to a temporary folder: a tiny MLP family and a tiny task on
generated arrays, and variants that break one rule each."""

from pathlib import Path

PRELUDE = """
import numpy as np
import torch
from torch import nn
import search


def splits(n_features=6, classes=3):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, n_features)).astype(np.float32)
    w = rng.normal(size=(n_features, classes))
    y = (x @ w).argmax(1)
    return {"train": (x[:200], y[:200]), "val": (x[200:250], y[200:250]), "test": (x[250:], y[250:])}


def mlp(config, io):
    layers, width = [], io.d_in
    for _ in range(config["depth"]):
        layers += [nn.Linear(width, config["width"]), nn.ReLU()]
        width = config["width"]
    return nn.Sequential(*layers, nn.Linear(width, io.d_out))


SPACE = {"width": {"low": 2, "high": 32, "log": True}, "depth": {"low": 1, "high": 3}}
"""

GOOD = (
    PRELUDE
    + """
search.array_task("tiny-data", splits, metrics={"accuracy": "maximize", "loss": "minimize"}, epochs=3,
                  batch_size=32, lr=1e-2)
search.family("tiny-mlp", space=SPACE, build=mlp, default_task="tiny-data")
"""
)

# variants: each breaks one rule (tests/search/plugins/test_plugins_cli.py's bad-input table)
BAD = {
    "import_fails": PRELUDE + 'raise RuntimeError("boom")\n',
    "builtin_family": PRELUDE + 'search.family("hourglass", space=SPACE, build=mlp)\n',
    "builtin_task": PRELUDE + 'search.array_task("digits-denoise", splits, metrics=["accuracy"])\n',
    "same_family": PRELUDE + 'search.family("tiny-mlp", space=SPACE, build=mlp)\n',
    "wrong_count": GOOD.replace(
        'search.family("tiny-mlp", space=SPACE, build=mlp,',
        'search.family("tiny-mlp", space=SPACE, build=mlp, count=lambda c, io: c["width"] * (io.d_in + io.d_out),',
    ),
    "no_direction": PRELUDE + 'search.array_task("f1-data", splits, metrics={"f1": lambda p, y: 0.5})\n',
    "no_valid_config": GOOD.replace(
        'default_task="tiny-data")', 'default_task="tiny-data", rules=["width > d_out", "width < d_out"])'
    ),
    "bad_shapes": PRELUDE
    + """
search.array_task("tiny-data", splits, metrics=["accuracy"])
search.family("tiny-mlp", space=SPACE, build=lambda c, io: nn.Linear(4, io.d_out), default_task="tiny-data")
""",
    "bad_outputs": PRELUDE
    + """
search.array_task("tiny-data", splits, metrics=["accuracy"])
search.family("tiny-mlp", space=SPACE, build=lambda c, io: nn.Linear(io.d_in, 7), default_task="tiny-data")
""",
    "never_reports": PRELUDE
    + """
search.family("tiny-mlp", space=SPACE, build=mlp, default_task="loop")

@search.task("loop", metrics={"score": "maximize"}, inputs=6, outputs=3, output="logits", epochs=2)
def train(model, settings, report):
    return {"score": 1.0}
""",
    "undeclared_metric": PRELUDE
    + """
search.family("tiny-mlp", space=SPACE, build=mlp, default_task="loop")

@search.task("loop", metrics={"score": "maximize"}, inputs=6, outputs=3, output="logits", epochs=2)
def train(model, settings, report):
    report(1, {"score": 0.5, "acc": 0.1})
    return {"score": 1.0}
""",
}

LOOP = (
    PRELUDE
    + """
search.family("tiny-mlp", space=SPACE, build=mlp, default_task="loop")


@search.task("loop", metrics={"score": "maximize"}, data=splits, epochs=3)
def train(model, settings, report):
    x, y = settings.data.split("train")
    xv, yv = settings.data.split("val")
    xt, yt = settings.data.split("test")
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    for epoch in range(1, settings.epochs + 1):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        with torch.no_grad():
            report(epoch, {"score": (model(xv).argmax(1) == yv).float().mean().item()})
    with torch.no_grad():
        return {"score": (model(xt).argmax(1) == yt).float().mean().item()}
"""
)

FLAKY = (
    PRELUDE
    + """
search.array_task("tiny-data", splits, metrics=["accuracy"], epochs=2)


def build(config, io):
    if config["width"] > 12:
        raise ValueError(f"width {config['width']} is too wide for this builder")
    if config["depth"] == 3:
        return "not a module"
    return mlp(config, io)


search.family("tiny-mlp", space=SPACE, build=build, default_task="tiny-data")
"""
)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(text)
    return path
