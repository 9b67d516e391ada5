"""The manifest's input fingerprint sees every file a reader may read, hidden ones included (a
workspace's ``.env`` is input to Workspace-Bench), and not the marker of a whole generated source."""
from __future__ import annotations

from benchwright import registry
from benchwright.files import SOURCE_COMPLETE_MARKER
from benchwright.manifest import fingerprint_source


def test_a_hidden_file_changes_the_fingerprint_and_the_source_marker_does_not(tmp_path):
    dataset = registry.get("workspace_bench")
    workspace = tmp_path / "workspaces" / "w1"
    (workspace / ".config").mkdir(parents=True)
    (workspace / "notes.md").write_text("# notes\n")
    before = fingerprint_source(dataset, str(tmp_path))
    assert before["files"] == 1

    (tmp_path / SOURCE_COMPLETE_MARKER).write_text("")
    assert fingerprint_source(dataset, str(tmp_path)) == before

    (workspace / ".env").write_text("TOKEN=1\n")
    (workspace / ".config" / "settings.json").write_text("{}\n")
    hidden = fingerprint_source(dataset, str(tmp_path))
    assert hidden["files"] == 3 and hidden["sha256"] != before["sha256"]
    (workspace / ".env").write_text("TOKEN=2\n")
    assert fingerprint_source(dataset, str(tmp_path))["sha256"] != hidden["sha256"]
