"""Rules for a source's files: the manifest's input fingerprint sees every file a reader may read, hidden
ones included (a workspace's ``.env`` is input to Workspace-Bench), and not the marker of a whole generated
source; a link out of the source is not the source's, but for a Hugging Face cache snapshot's blobs."""
from __future__ import annotations

import itertools
import os

from benchwright import registry
from benchwright.files import SOURCE_COMPLETE_MARKER, outside_of
from benchwright.manifest import fingerprint_source


def test_a_hidden_file_changes_the_fingerprint_and_the_source_marker_does_not(tmp_path):
    dataset = registry.get("workspace_bench")
    workspace = tmp_path / "workspaces" / "w1"
    (workspace / ".config").mkdir(parents=True)
    (workspace / "notes.md").write_text("# notes\n")
    before = fingerprint_source(dataset, str(tmp_path))
    assert before["files"] == 1

    (tmp_path / SOURCE_COMPLETE_MARKER).write_text("")
    (tmp_path / ".cache" / "huggingface" / "download").mkdir(parents=True)  # hf download --local-dir's notes
    (tmp_path / ".cache" / "huggingface" / "download" / "notes.md.metadata").write_text("etag\n1733050000.1\n")
    assert fingerprint_source(dataset, str(tmp_path)) == before

    (workspace / ".env").write_text("TOKEN=1\n")
    (workspace / ".config" / "settings.json").write_text("{}\n")
    hidden = fingerprint_source(dataset, str(tmp_path))
    assert hidden["files"] == 3 and hidden["sha256"] != before["sha256"]
    (workspace / ".env").write_text("TOKEN=2\n")
    assert fingerprint_source(dataset, str(tmp_path))["sha256"] != hidden["sha256"]


def test_a_source_in_a_hugging_face_cache_snapshot_may_read_its_blobs(tmp_path):
    """Every file of a snapshot the hub client downloaded is a link into its repository's blobs folder:
    those links are the source's own bytes; a link anywhere else (another repository's blobs included)
    is not."""
    import os

    from benchwright.files import hf_cache_blobs, resolves_outside

    repo = tmp_path / "hub" / "datasets--org--clear"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / "0f3a").write_bytes(b"image bytes")
    snapshot = repo / "snapshots" / "88920a39" / "forget01"
    snapshot.mkdir(parents=True)
    os.symlink("../../../blobs/0f3a", snapshot / "p0.png")
    other = tmp_path / "hub" / "datasets--org--other"
    (other / "blobs").mkdir(parents=True)
    (other / "blobs" / "77aa").write_bytes(b"not ours")
    os.symlink(str(other / "blobs" / "77aa"), snapshot / "p1.png")
    os.symlink(str(tmp_path / "secret.txt"), snapshot / "p2.png")
    (tmp_path / "secret.txt").write_text("secret")

    root = str(repo / "snapshots" / "88920a39")
    assert hf_cache_blobs(root) == os.path.realpath(repo / "blobs")
    assert not resolves_outside(str(snapshot / "p0.png"), root)
    assert resolves_outside(str(snapshot / "p1.png"), root)
    assert resolves_outside(str(snapshot / "p2.png"), root)
    # a source given as a link to the snapshot (a common setup) is the snapshot
    os.symlink(root, tmp_path / "clear")
    assert not resolves_outside(str(tmp_path / "clear" / "forget01" / "p0.png"), str(tmp_path / "clear"))
    assert resolves_outside(str(tmp_path / "clear" / "forget01" / "p2.png"), str(tmp_path / "clear"))
    # the same links under a folder that is not a cache snapshot are outside it
    plain = tmp_path / "plain"
    plain.mkdir()
    os.symlink(str(repo / "blobs" / "0f3a"), plain / "p0.png")
    assert hf_cache_blobs(str(plain)) is None and resolves_outside(str(plain / "p0.png"), str(plain))


def test_a_link_to_a_file_is_input_and_a_fifo_neither_blocks_nor_counts(tmp_path):
    """The pipelines read through a link to a file, so the fingerprint does too (a change of its target
    changes it); a FIFO is not a file: listing and hashing never open it (that open would block)."""
    import os

    from benchwright.files import list_files
    from benchwright.hashing import sha256_files

    dataset = registry.get("workspace_bench")
    workspace = tmp_path / "workspaces" / "w1"
    workspace.mkdir(parents=True)
    (workspace / "data.csv").write_text("a,b\n1,2\n")
    (workspace / "same.csv").symlink_to("data.csv")
    os.mkfifo(workspace / "pipe")
    assert [p.rsplit("/", 1)[1] for p in list_files(str(tmp_path))] == ["data.csv", "same.csv"]
    before = fingerprint_source(dataset, str(tmp_path))
    assert before["files"] == 2 and not before["unreadable"]
    (workspace / "data.csv").write_text("a,b\n1,3\n")
    assert fingerprint_source(dataset, str(tmp_path))["sha256"] != before["sha256"]
    [refused] = sha256_files([str(workspace / "pipe")])
    assert isinstance(refused, OSError) and refused.filename == str(workspace / "pipe")


def _outside_by_realpath(path: str, root: str) -> bool:
    """The definition ``outside_of`` shortcuts: the file's whole real path against the root's."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return not (real == base or real.startswith(base.rstrip(os.sep) + os.sep))


def test_outside_of_answers_as_realpath_does_for_every_link_shape(tmp_path):
    """The shortcut (a folder's real path once, a file's own only when it is a link) gives realpath's
    answer for links in and out, a link to a link, dangling links, loops, `.`, `..` and missing parts."""
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "d" / "e").mkdir(parents=True)
    (out / "o").mkdir(parents=True)
    (src / "d" / "f").write_text("")
    (out / "x").write_text("")
    (src / "lout").symlink_to(out)  # folder link out
    (src / "lin").symlink_to(src / "d")  # folder link in
    (src / "fout").symlink_to(out / "x")  # file link out
    (src / "f2").symlink_to(src / "fout")  # a link to a link out
    (src / "dang").symlink_to(tmp_path / "nowhere")  # dangling, out
    (src / "loop").symlink_to("loop")
    (src / "self").symlink_to(src)
    (tmp_path / "rootlink").symlink_to(src)
    parts = ["d", "e", "f", "lout", "lin", "fout", "f2", "dang", "loop", "self", "..", ".", "missing", "x"]
    differ, cases = [], 0
    for root in (str(src), str(tmp_path / "rootlink") + "/"):
        outside = outside_of(root)
        for combo in itertools.product(parts, repeat=3):
            path = os.path.join(root, *combo)
            cases += 1
            if outside(path) != _outside_by_realpath(path, root) or outside("file://" + path) != outside(path):
                differ.append(path)
    assert cases == 2 * len(parts) ** 3 and differ == []
    assert outside_of(str(src))(str(src / "fout")) and not outside_of(str(src))(str(src / "lin" / "f"))
