"""Reading an untrusted local file: regular files only, and never past the cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.capped_read import CappedReadError, ReadProblem, read_capped


def test_a_file_of_exactly_the_cap_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    assert read_capped(path, 100) == b"x" * 100


def test_a_file_one_byte_over_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 101)
    with pytest.raises(CappedReadError) as caught:
        read_capped(path, 100)
    assert (caught.value.problem, str(caught.value)) == (ReadProblem.TOO_LARGE, "over 100 bytes")


@pytest.mark.parametrize("name", ["folder", "missing"])
def test_a_folder_or_nothing_is_not_a_file(tmp_path: Path, name: str) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(CappedReadError) as caught:
        read_capped(tmp_path / name, 100)
    assert (caught.value.problem, str(caught.value)) == (ReadProblem.NOT_FILE, "not a file")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_device_is_refused_without_being_read() -> None:
    with pytest.raises(CappedReadError) as caught:
        read_capped(Path("/dev/zero"), 100)
    assert caught.value.problem is ReadProblem.NOT_FILE


def test_an_unreadable_file_says_why_in_the_os_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "locked.bin"
    path.write_bytes(b"x")

    def refuse(*_args: object, **_kwargs: object) -> None:
        # What open(2) answers for a file without read permission (tests run as root here).
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(CappedReadError) as caught:
        read_capped(path, 100)
    error = caught.value
    assert (error.problem, error.detail) == (ReadProblem.UNREADABLE, "Permission denied")
    assert str(error) == "unreadable: Permission denied"
