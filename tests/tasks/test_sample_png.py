"""Sample grids: tiling layout and PNG round trip."""

import base64
import io

import pytest
import torch
from PIL import Image

from tasks.sample_png import grid_png, png_artifact, tile


def test_tile_places_images_row_major_with_padding():
    imgs = torch.stack([torch.full((1, 2, 3), v / 10) for v in range(5)])  # 5 images 2x3
    grid = tile(imgs, columns=2, pad=1)
    assert grid.shape == (1, 3 * 3 + 1, 2 * 4 + 1)
    assert torch.all(grid[:, 1:3, 1:4] == 0.0) and torch.all(grid[:, 1:3, 5:8] == 0.1)
    assert torch.all(grid[:, 4:6, 1:4] == 0.2) and torch.all(grid[:, 7:9, 1:4] == 0.4)
    assert torch.all(grid[:, 7:9, 5:8] == 0.5)  # the empty cell stays background
    assert torch.all(grid[:, 0, :] == 0.5)


def test_png_round_trip_grey_and_rgb():
    g = torch.Generator().manual_seed(0)
    for c in (1, 3):
        imgs = torch.rand(12, c, 4, 4, generator=g)
        art = png_artifact(grid_png(imgs, columns=5, scale=2))
        assert art["media_type"] == "image/png"
        img = Image.open(io.BytesIO(base64.b64decode(art["data"])))
        assert img.size == ((5 * 5 + 1) * 2, (3 * 5 + 1) * 2)
        assert img.mode == ("L" if c == 1 else "RGB")
        expected = tile(imgs, 5).mul(255).round().to(torch.uint8)
        assert img.getpixel((2 * 1, 2 * 1)) == (
            expected[0, 1, 1].item() if c == 1 else tuple(expected[:, 1, 1].tolist())
        )


def test_tile_rejects_bad_input():
    with pytest.raises(ValueError):
        tile(torch.rand(0, 1, 2, 2), 2)
    with pytest.raises(ValueError):
        tile(torch.rand(2, 2, 2), 2)
