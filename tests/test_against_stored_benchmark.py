"""benchmarks/search_quality/against_stored.py: a run's studies read against a stored run's JSON."""

import json

import pytest

from tests.bench_scripts import run_benchmark

SETTING = "hourglass-conventional"


@pytest.mark.slow
def test_reads_a_run_against_its_own_json_exactly_and_refuses_bad_input(tmp_path):
    """Read against the JSON of the run that made them, the studies' fractions are the
    JSON's own (same reference, same denominator); the work to reach a search's own
    fraction is its whole work or less; bad input is one line and exit status 2."""
    db, out = f"sqlite:///{tmp_path}/eff.db", tmp_path / "eff.json"
    done = run_benchmark(
        "search_quality.search_efficiency",
        "--quick",
        "--samplers",
        "tpe,random",
        "--storage",
        db,
        "--out",
        out,
        "--tag",
        "t1",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(out.read_text())["settings"][SETTING]["summary"]
    args = [
        "--stored",
        out,
        "--setting",
        SETTING,
        "--storage",
        db,
        "--tag",
        "t1",
        "--searches",
        "tpe,random",
        "--peer",
        "random",
        "--base",
        "random",
        "--json",
        tmp_path / "a.json",
    ]
    read = run_benchmark("search_quality.against_stored", *args, cwd=tmp_path)
    assert read.returncode == 0, read.stderr[-3000:]
    got = json.loads((tmp_path / "a.json").read_text())
    assert got["peer"] == "random" and got["peer_fractions"] == summary["random"]["fractions"]
    for search in ("tpe", "random"):
        assert got["searches"][search]["fractions"] == summary[search]["fractions"]
        assert got["searches"][search]["work"] == summary[search]["parameter_epochs"]
    # random reaches its own fraction exactly when its work is spent, or before
    assert all(v is not None and 0 < v <= 1 + 1e-12 for v in got["searches"]["random"]["reach"])
    assert "| tpe |" in read.stdout and "| random |" in read.stdout
    # --base: each search's hypervolume and work as shares of the base's, seed by seed
    tpe, rnd = got["searches"]["tpe"], summary["random"]
    assert got["base"] == "random" and got["searches"]["random"]["hv_ratio"] == [1.0] * len(rnd["fractions"])
    assert tpe["hv_ratio"] == [f / b for f, b in zip(summary["tpe"]["fractions"], rnd["fractions"])]
    assert tpe["work_ratio"] == [w / b for w, b in zip(summary["tpe"]["parameter_epochs"], rnd["parameter_epochs"])]
    assert "hypervolume ratio to random" in read.stdout
    # at equal compute: the base with its own whole work reached its own final fraction; with
    # another search's work, that final where it is at least the base's work, at most it where less
    assert got["searches"]["random"]["base_at_same_work"] == rnd["fractions"]
    for same, f, w, bw in zip(tpe["base_at_same_work"], rnd["fractions"], tpe["work"], rnd["parameter_epochs"]):
        assert (same == f) if w >= bw else (0.0 <= same <= f)
    assert "random with this search's work" in read.stdout
    # the target the other way round: the base stopped at half its own work holds at most its
    # final front; a search that spent at most half the base's work holds its own final
    assert all(0.0 <= v <= 1.0 for v in got["searches"]["random"]["at_half_base_work"])
    for half, f, b, w, bw in zip(
        tpe["at_half_base_work"], summary["tpe"]["fractions"], rnd["fractions"], tpe["work"], rnd["parameter_epochs"]
    ):
        assert half == f / b if w <= bw / 2 else 0.0 <= half <= f / b
    assert "this search at half random's work" in read.stdout
    # --base-tag: the base read from a run it names (here the same one), not one of --searches
    other = args[: args.index("--searches")] + [
        "--searches",
        "tpe",
        "--peer",
        "random",
        "--base",
        "random",
        "--base-tag",
        "t1",
        "--json",
        tmp_path / "b.json",
    ]
    again = run_benchmark("search_quality.against_stored", *other, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    got_b = json.loads((tmp_path / "b.json").read_text())
    assert got_b["searches"]["tpe"]["base_at_same_work"] == tpe["base_at_same_work"]
    assert got_b["searches"]["tpe"]["hv_ratio"] == tpe["hv_ratio"]
    for bad, says in [
        (["--setting", "sr-hourglass"], "holds no setting 'sr-hourglass'"),
        (["--tag", "t2"], "holds no study eff-t2-"),
        (["--peer", "cma"], "no peer to reach"),
        (["--base", "gp"], "--base gp is not one of --searches"),
        (["--base", "random", "--base-tag", "t9"], "holds no study eff-t9-"),
        (["--storage", f"sqlite:///{tmp_path}/none.db"], "no such database"),
    ]:
        flag = args.index(bad[0])
        wrong = args[:flag] + bad + args[flag + 2 :]  # a flag pair replaced (and any pair after it added)
        r = run_benchmark("search_quality.against_stored", *wrong, cwd=tmp_path, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, (bad, r.stderr)
    assert not (tmp_path / "none.db").exists()
    at = args.index("--base")
    alone = args[:at] + args[at + 2 :] + ["--base-tag", "t1"]
    r = run_benchmark("search_quality.against_stored", *alone, cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--base-tag needs --base" in r.stderr, r.stderr


@pytest.mark.slow
def test_held_out_seeds_read_the_peer_from_storage_against_the_stored_reference(tmp_path):
    """A run of seed 1 (`--seeds 1-1`) beside a stored run of seed 0: the searches' studies
    are named by their seed, and the peer's figures on seed 1, which the stored JSON does
    not hold, are the peer's own study of that seed read against the stored reference
    (exactly what reading it as a search gives); without --peer-tag that seed is refused."""
    db, out, held = f"sqlite:///{tmp_path}/eff.db", tmp_path / "eff.json", tmp_path / "held.json"
    first = run_benchmark(
        "search_quality.search_efficiency",
        "--quick",
        "--samplers",
        "tpe,random",
        "--storage",
        db,
        "--out",
        out,
        "--tag",
        "t1",
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr[-3000:]
    second = run_benchmark(
        "search_quality.search_efficiency",
        "--quick",
        "--seeds",
        "1-1",
        "--samplers",
        "tpe,random",
        "--storage",
        db,
        "--out",
        held,
        "--tag",
        "t2",
        cwd=tmp_path,
    )
    assert second.returncode == 0, second.stderr[-3000:]
    report = json.loads(held.read_text())
    assert report["seed_ids"] == [1] and "eff-t2-hourglass-conventional-tpe-1: 4 finished trials" in second.stdout
    args = [
        "--stored",
        out,
        "--setting",
        SETTING,
        "--storage",
        db,
        "--tag",
        "t2",
        "--searches",
        "tpe,random",
        "--peer",
        "random",
        "--seeds",
        "1-1",
        "--peer-tag",
        "t2",
        "--json",
        tmp_path / "a.json",
    ]
    read = run_benchmark("search_quality.against_stored", *args, cwd=tmp_path)
    assert read.returncode == 0, read.stderr[-3000:]
    got = json.loads((tmp_path / "a.json").read_text())
    assert got["seeds"] == [1] and got["peer_read"] == [1]
    assert got["peer_fractions"] == got["searches"]["random"]["fractions"]  # the same study, the same reference
    assert got["peer_work"] == report["settings"][SETTING]["summary"]["random"]["parameter_epochs"]
    assert got["searches"]["random"]["reach"][0] is not None and 0 < got["searches"]["random"]["reach"][0] <= 1 + 1e-12
    assert "1: the peer's own studies of tag t2" in read.stdout
    for bad, says in [
        (["--peer-tag", "t9"], "holds no study eff-t9-hourglass-conventional-random-1"),
        (["--seeds", "3-1"], "a count N"),
        (["--seeds", "0-1"], "holds no study eff-t2-hourglass-conventional-tpe-0"),
    ]:
        flag = args.index(bad[0])
        r = run_benchmark(
            "search_quality.against_stored", *args[:flag], *bad, *args[flag + 2 :], cwd=tmp_path, timeout=120
        )
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and says in r.stderr, (bad, r.stderr)
    at = args.index("--peer-tag")
    r = run_benchmark("search_quality.against_stored", *args[:at], *args[at + 2 :], cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "holds no seed 1 of random" in r.stderr, r.stderr
