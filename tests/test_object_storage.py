"""Sources and outputs on object storage: a local S3-compatible server (moto's server mode on
127.0.0.1, one per test process: ``moto_server`` in tests/conftest.py, emptied for each module), reached through s3fs with the standard AWS_ENDPOINT_URL.

Every registered dataset: its tiny source fingerprinted from the store as from the disk, and its tiny build
(made once per test run) published to the store by the core's commit, then validated, described and loaded
from there. WildBox, as well: a whole build from the store to the store (its reading of a source through fsspec,
the same bytes as a local build). The template (the cheapest build: staging, committing, replacing and the target
check are the core's, the same for every dataset): a build's replacement, two failed builds, --force."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import fsspec
import pytest
import s3fs

from benchwright import published, registry
from benchwright.cli import main as cli_main
from benchwright.manifest import fingerprint_source, rows_by_config_split
from tests.quality_builds import tiny_build
from tests.wildbox_helpers import build_wildbox, published_hashes, tiny_source

BUCKET = "benchwright-test"


@pytest.fixture(scope="module")
def s3_endpoint(moto_server):
    """The test process's moto server (``moto_server``, tests/conftest.py) emptied for this module (moto's
    reset: no bucket, no object of an earlier module's is left), with ``BUCKET`` made and the standard AWS
    environment pointing at it for the module's life; yields the server's URL."""
    import urllib.request

    urllib.request.urlopen(urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST"), timeout=30).read()
    env = {"AWS_ENDPOINT_URL": moto_server, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
           "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    # fsspec caches filesystem instances and their listings: an earlier module's would still list what the
    # reset removed
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        fsspec.filesystem("s3", skip_instance_cache=True).mkdir(BUCKET)
        yield moto_server
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# Four of the tiny WildBox source's twelve videos (63 of its 352 files), the smallest that give both splits: on S3
# every file read is requests (a HEAD and GETs each, to a server that spends ~10 ms of CPU on one), and these go
# through every step a larger source does.
FOUR_VIDEOS = ("DJI_20250127102126_0452_D", "DJI_20250217131336_0139_D", "DJI_20250224105158_0738_D",
               "DJI_20250311085920_0099_D")


@pytest.fixture(scope="module")
def s3_build(s3_endpoint, tmp_path_factory):
    """Four videos of the tiny WildBox source uploaded to S3 and built from there to S3 (WildBox's own reading
    of a source through fsspec); the same source's local build."""
    base = tmp_path_factory.mktemp("four-videos")
    local_source = tiny_source(base / "raw")
    for video in local_source.iterdir():
        if video.name not in FOUR_VIDEOS:
            shutil.rmtree(video)
    assert sorted(p.name for p in local_source.iterdir()) == list(FOUR_VIDEOS)
    local = build_wildbox(local_source, base / "out")
    fs = fsspec.filesystem("s3")
    fs.put(str(local_source), f"{BUCKET}/raw", recursive=True)
    assert cli_main(["build", "wildbox", "--source", f"s3://{BUCKET}/raw", "--out", f"s3://{BUCKET}/out"]) == 0
    return f"s3://{BUCKET}/out/wildbox", local, local_source


@pytest.mark.parametrize("name", registry.names())
def test_every_dataset_reads_its_source_and_its_build_on_object_storage(name, s3_endpoint, tmp_path_factory,
                                                                          capsys, monkeypatch):
    """The tiny source uploaded: listed and fingerprinted from the store as the build fingerprinted it on disk.
    The tiny build published on the store by ``published.commit`` (what a build to S3 does last): ``validate``
    passes on it (every file's sha256 read back, the expectations), ``info`` describes it, and its first config
    loads with ``datasets`` from the store with the local build's rows."""
    import datasets.config
    from datasets import load_dataset

    dataset = registry.get(name)
    source, root = tiny_build(name, tmp_path_factory)
    fs = fsspec.filesystem("s3")
    fs.put(str(source), f"{BUCKET}/sources/{name}", recursive=True)
    local_input = json.loads((root / "_build" / "manifest.json").read_text())["input"]
    remote_input = fingerprint_source(dataset, f"s3://{BUCKET}/sources/{name}")
    assert (remote_input["files"], remote_input["sha256"]) == (local_input["files"], local_input["sha256"])
    url = f"s3://{BUCKET}/published/{name}"
    assert published.commit(root, url, f"{url}/_staging/unused", {}) == published.resolve(url)
    assert cli_main(["validate", url]) == 0
    assert cli_main(["info", url]) == 0
    assert f"{name} at {url} (build {published.resolve(url)})" in capsys.readouterr().out
    rows = rows_by_config_split(root)
    config = next(iter(dataset.configs))
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)  # as test_s3_build_loads_with_datasets says
    storage = {"key": "test", "secret": "test", "client_kwargs": {"endpoint_url": s3_endpoint}}
    remote = load_dataset("parquet", data_files=published.data_files(url, config), storage_options=storage)
    assert {split: d.num_rows for split, d in remote.items()} == rows[config]


def _remote_hashes(build_url: str) -> dict[str, str]:
    import hashlib

    fs, root = fsspec.core.url_to_fs(build_url)
    out = {}
    for path in sorted(fs.find(root)):
        rel = os.path.relpath(path, root)
        if rel == "_build/manifest.json" or rel.startswith("_build/validation/"):
            continue
        out[rel] = hashlib.sha256(fs.cat_file(path)).hexdigest()
    return out


def test_s3_build_is_committed_and_byte_identical_to_a_local_build(s3_build):
    url, local, _ = s3_build
    fs = fsspec.filesystem("s3")
    root_manifest = json.loads(fs.cat_file(f"{url}/_build/manifest.json"))
    build_url = published.resolve(url)
    assert build_url == f"{url}/{root_manifest['published_at']}"
    # nothing is left of the staging area, and exactly one build is there
    assert not fs.exists(f"{url}/{published.STAGING}")
    assert [p.rsplit("/", 1)[1] for p in fs.ls(f"{url}/{published.BUILDS}")] == [root_manifest["published_at"].split("/")[1]]
    # the same input gives the same bytes wherever it is read from and written to
    assert _remote_hashes(build_url) == published_hashes(local)
    own = json.loads(fs.cat_file(f"{build_url}/_build/manifest.json"))
    assert {k: v for k, v in root_manifest.items() if k != "published_at"} == own


def test_s3_build_loads_with_datasets(s3_build, s3_endpoint, monkeypatch):
    import datasets.config
    from datasets import load_dataset

    # datasets' offline mode refuses every remote URL, including this S3 server on 127.0.0.1; the
    # packaged "parquet" loader contacts nothing else, so it is lifted for this load only.
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    url, local, _ = s3_build
    files = published.data_files(url, "boxes")
    assert all(f.startswith(f"{published.resolve(url)}/boxes/") for fs_ in files.values() for f in fs_)
    storage = {"key": "test", "secret": "test", "client_kwargs": {"endpoint_url": s3_endpoint}}
    remote = load_dataset("parquet", data_files=files, storage_options=storage)
    here = load_dataset(str(local), "boxes")
    assert set(remote) == set(here) == {"train", "validation"}
    for split in here:
        assert remote[split].num_rows == here[split].num_rows > 0
        # the HF feature metadata (ClassLabel names) travels inside the Parquet files
        assert remote[split].features["species"] == here[split].features["species"]
        assert sorted(remote[split]["box_id"]) == sorted(here[split]["box_id"])


def test_s3_validate_passes_then_fails_on_a_flipped_byte(s3_build, capsys):
    url, _, _ = s3_build
    assert cli_main(["validate", url]) == 0
    assert "passed" in capsys.readouterr().out
    fs = fsspec.filesystem("s3")
    build_url = published.resolve(url)
    report = json.loads(fs.cat_file(f"{build_url}/_build/validation/report.json"))
    assert report["passed"] and any(r["check"] == "root manifest" and r["ok"] for r in report["results"])
    shard = sorted(fs.glob(f"{build_url}/boxes/*.parquet"))[0]
    data = bytearray(fs.cat_file(shard))
    original = bytes(data)
    data[len(data) // 2] ^= 0xFF
    fs.pipe_file(shard, bytes(data))
    try:
        assert cli_main(["validate", url]) == 1
        assert "sha256" in capsys.readouterr().out
    finally:
        fs.pipe_file(shard, original)


def test_info_reads_an_s3_build(s3_build, capsys):
    url, _, _ = s3_build
    assert cli_main(["info", url]) == 0
    out = capsys.readouterr().out
    assert f"wildbox at {url} (build {published.resolve(url)})" in out
    assert "boxes" in out and "train" in out


def test_a_second_build_replaces_the_first_and_a_failed_one_publishes_nothing(s3_endpoint, tmp_path_factory,
                                                                               tmp_path):
    """Replacing a build on the store, a build of the same input again, and two failed builds: the core's staging,
    commit and clean-up, the same code for every dataset, so on the template (the cheapest build; WildBox's own
    reading of a source on the store is ``s3_build``'s)."""
    local_source, _ = tiny_build("template", tmp_path_factory)
    fs = fsspec.filesystem("s3")
    out = f"s3://{BUCKET}/replaced"
    url = f"{out}/template"
    fs.put(str(local_source), f"{BUCKET}/replaced-raw1", recursive=True)
    assert cli_main(["build", "template", "--source", f"s3://{BUCKET}/replaced-raw1", "--out", out]) == 0
    first = published.resolve(url)
    # a source with one file less: another build id, committed by the root manifest
    files = sorted(p.name for p in Path(local_source).iterdir())
    fs.put(str(local_source), f"{BUCKET}/raw2", recursive=True)
    fs.rm(f"{BUCKET}/raw2/{files[0]}")
    assert cli_main(["build", "template", "--source", f"s3://{BUCKET}/raw2", "--out", out]) == 0
    second = published.resolve(url)
    assert second != first
    assert fs.exists(f"{first}/_build/manifest.json")  # the previous build stays for readers still on it
    read = json.loads(fs.cat_file(f"{second}/_build/manifest.json"))["reconciliation"]["units"]["record"]["read"]
    assert read == len((local_source / files[1]).read_text().splitlines())  # the removed file's records are gone
    # the same input again: the same build id, committed as it is (not rewritten under its readers)
    own = fs.cat_file(f"{second}/_build/manifest.json")
    assert cli_main(["build", "template", "--source", f"s3://{BUCKET}/raw2", "--out", out]) == 0
    assert published.resolve(url) == second and fs.cat_file(f"{second}/_build/manifest.json") == own
    assert cli_main(["validate", url]) == 0
    # a build that fails in finalize (too many bad records) publishes nothing and keeps what explains
    # the failure under _failed/<run>/
    damaged = tmp_path / "raw3"
    shutil.copytree(local_source, damaged)
    registry.get("template").plant_bad_record(str(damaged))
    fs.put(str(damaged), f"{BUCKET}/raw3", recursive=True)
    assert cli_main(["build", "template", "--source", f"s3://{BUCKET}/raw3", "--out", out,
                     "--max-bad-fraction", "0"]) != 0
    assert published.resolve(url) == second
    assert fs.glob(f"{url}/_failed/*/_build/quarantine/*.jsonl")
    # a build that fails (nothing can be read) leaves the committed build and no staging behind
    fs.pipe_file(f"{BUCKET}/empty/readme.txt", b"not a template source")
    assert cli_main(["build", "template", "--source", f"s3://{BUCKET}/empty", "--out", out]) != 0
    assert published.resolve(url) == second
    assert not fs.exists(f"{url}/{published.STAGING}") or not fs.ls(f"{url}/{published.STAGING}")


def test_wordeval_reads_its_catalogue_from_s3(s3_endpoint, tmp_path):
    from benchwright.wordeval.sources import read_catalogue

    local = tmp_path / "catalogue"
    registry.part("wordeval", "synth")(str(local), scale="tiny")
    fsspec.filesystem("s3").put(str(local), f"{BUCKET}/catalogue", recursive=True)
    remote, here = read_catalogue(f"s3://{BUCKET}/catalogue"), read_catalogue(str(local))
    assert remote.units == here.units and remote.templates == here.templates and len(here.units) == 6


def test_progress_reports_reach_the_driver_through_the_store(s3_endpoint):
    """On object storage the stages' running counts go through the store (issue 23: progress on every
    runner whose workers reach the output): each worker's report is one object, the driver sums them."""
    from benchwright.progress import StageReport, read_channel

    url = f"s3://{BUCKET}/out/demo/{published.STAGING}/run1/_progress"
    first, second = StageReport(url, "ParseSegment"), StageReport(url, "ParseSegment")
    first.add(3, 3)
    first.flush()
    second.add(2, 1)
    second.flush()
    StageReport(url, "AnnotateSegment").add(0, 0)  # nothing done yet: nothing written
    assert read_channel(url) == {"ParseSegment": (5, 4)}
    first.add(4, 4)
    first.flush()
    assert read_channel(url) == {"ParseSegment": (9, 8)}  # a report is replaced, never added twice
    # a bundle that ends within FLUSH_S of the last write still leaves its final counts (the driver's
    # last line, read once the pipeline has run, showed a finished stage short of its total)
    third = StageReport(url, "AnnotateSegment")
    third.add(2, 2)
    third.end_bundle()
    assert read_channel(url)["AnnotateSegment"] == (2, 2)
    published.remove(url)
    assert read_channel(url) == {}


def test_a_prefix_that_is_not_a_build_is_refused_and_force_replaces_it(s3_endpoint, tmp_path_factory, tmp_path,
                                                                       capfd):
    """Issue 23.1 on S3: the refusal through the command line as a user's terminal gets it (its one line, read at
    the file descriptors), then the replacement with --force (both through ``cli.main`` in this process). The
    target check is the core's: on the template."""
    from tests.test_cli_usage import benchwright_here

    fs = fsspec.filesystem("s3")
    out, url = f"s3://{BUCKET}/mixed", f"s3://{BUCKET}/mixed/template"
    fs.pipe_file(f"{BUCKET}/mixed/template/notes.txt", b"mine")
    source, _ = tiny_build("template", tmp_path_factory)
    refused = benchwright_here(capfd, "build", "template", "--source", source, "--out", out)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert f"{url} holds objects that are not a build's of template (notes.txt)" in refused.stderr
    assert "--force" in refused.stderr
    fs.invalidate_cache()
    assert fs.cat_file(f"{BUCKET}/mixed/template/notes.txt") == b"mine"
    assert fs.find(f"{BUCKET}/mixed") == [f"{BUCKET}/mixed/template/notes.txt"]  # no lock, no staging

    done = benchwright_here(capfd, "build", "template", "--source", source, "--out", out, "--force")
    assert done.returncode == 0, done.stderr
    assert f"[template] replacing {url}, which holds objects that are not a build's of template " \
           "(notes.txt) (--force)" in done.stdout
    # issue 23.5: the stages' counts went through the store (OUT/template/_staging/<run>/_progress)
    files = len(list(source.glob("*.jsonl")))
    assert re.search(rf"^\[template\] pipeline done in \w+: ParseFile {files}/{files} files$", done.stderr,
                     re.MULTILINE), done.stderr
    fs.invalidate_cache()
    assert not fs.exists(f"{BUCKET}/mixed/template/notes.txt")
    assert cli_main(["validate", url]) == 0
    # a build of it is replaced without --force, saying what it replaces: the line a rebuild prints, of the
    # same build mirrored as its staging (a third build through the CLI would test nothing more)
    from benchwright.build import replacing
    from benchwright.target import check_target
    from benchwright.options import BuildOptions

    dataset = registry.get("template")
    assert check_target(dataset.name, BuildOptions(out=out, progress=False)) is None
    published.mirror(published.committed(url)[1], tmp_path / "again")  # the committed build, not the dataset URL's root
    line = replacing(dataset, url, tmp_path / "again", None)
    assert re.fullmatch(r"\[template\] replacing the build of \d{4}-\d\d-\d\d \d\d:\d\d UTC, [\d,]+ rows; diff: "
                        r"[\d,]+ rows \(\+0\), files 0 changed, 0 added, 0 removed, \d+ unchanged; input unchanged", line), line


def test_the_root_manifest_is_read_as_it_is_now_after_a_listing_and_a_commit_elsewhere(s3_endpoint):
    """A reader that listed a build folder, then reads the root manifest after another process committed a
    new one, reads the new one. s3fs serves ``open``'s size and ETag from its cached listing and sends the GET
    with If-Match: the stale ETag failed with FileExpired (the CI failure of a fault test on a committed
    manifest)."""
    here = fsspec.filesystem("s3")
    elsewhere = fsspec.filesystem("s3", skip_instance_cache=True)
    url = f"s3://{BUCKET}/relisted/template"
    elsewhere.pipe_file(f"{url}/{published.MANIFEST}".removeprefix("s3://"), b'{"published_at": "_builds/a"}')
    assert here.ls(f"{url}/_build".removeprefix("s3://"))  # this process's listing (and its ETag) is cached
    elsewhere.pipe_file(f"{url}/{published.MANIFEST}".removeprefix("s3://"),
                        b'{"published_at": "_builds/bb", "x": 1}')
    assert published.committed(url) == ({"published_at": "_builds/bb", "x": 1}, f"{url}/_builds/bb")
