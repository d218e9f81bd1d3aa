import tarfile

from toybox.archive import archive_logs


def test_archive(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.log").write_text("x\n")
    target = archive_logs("nightly")
    with tarfile.open(tmp_path / target) as tar:
        assert "logs/a.log" in tar.getnames()
