"""Artifact store URLs: the default folder beside a SQLite file, --keep, bad URLs."""

import os

import pytest

from core.errors import UserError
from search.artifacts.location import default_location, normalize, open_location, weights_location


def test_the_default_folder_is_beside_the_database_file(tmp_path):
    assert default_location(f"sqlite:///{tmp_path / 'runs.db'}") == str(tmp_path / "runs-artifacts")
    assert weights_location("pareto", None, f"sqlite:///{tmp_path / 'search.db'}") == str(tmp_path / "search-artifacts")
    assert weights_location("none", None, f"sqlite:///{tmp_path / 'search.db'}") is None
    assert weights_location("all", None, None) is None  # a store with no URL (the tests' in-memory one)
    assert weights_location("all", "w", "postgresql://u@h/db") == os.path.abspath("w")


@pytest.mark.parametrize("url", ["postgresql://user:secret@host/db", "sqlite://", "sqlite:///:memory:"])
def test_a_database_that_is_not_a_file_needs_artifacts(url):
    with pytest.raises(UserError, match="is not a file.*--artifacts") as e:
        weights_location("pareto", None, url)
    assert "secret" not in str(e.value)


def test_urls_are_normalised_and_bad_ones_refused(tmp_path):
    assert normalize(f"file://{tmp_path}/w/") == str(tmp_path / "w")
    assert normalize("s3://bucket/some/prefix/") == "s3://bucket/some/prefix"
    with pytest.raises(UserError, match="unknown scheme 'ftp'"):
        normalize("ftp://host/x")
    with pytest.raises(UserError, match="names no bucket"):
        normalize("s3:///x")
    with pytest.raises(UserError, match="unknown --keep 'best'; known: pareto, all, none"):
        weights_location("best", None, None)


def test_a_folder_store_is_made_on_demand_and_checked(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        open_location(str(tmp_path / "nope"))
    loc = open_location(str(tmp_path / "a" / "b"), create=True)
    loc.write("k.bin", b"abc")
    assert loc.read("k.bin") == b"abc" and (tmp_path / "a" / "b" / "k.bin").read_bytes() == b"abc"
    loc.remove("k.bin")
    loc.remove("k.bin")  # already gone: no error
    with pytest.raises(UserError, match="missing from the artifact store"):
        loc.read("k.bin")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="cannot make the artifact folder"):
        open_location(str(tmp_path / "file" / "sub"), create=True)
