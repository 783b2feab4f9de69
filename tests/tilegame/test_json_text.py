"""``json_text``: every way a file can fail to be JSON is one ``ValueError`` saying which."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtrain_env.tilegame import json_text


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\xff{}", "not UTF-8 text: invalid start byte at byte 0"),
        (b'{"a": "\xe9"}', "not UTF-8 text: invalid continuation byte at byte 7"),
        (b'{"a": ', "Expecting value"),
        (b"[" * 100_000, "JSON nested too deeply to read"),
    ],
)
def test_read_file_names_what_is_wrong(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message) as err:
        json_text.read_file(path)
    assert str(path) not in str(err.value)  # the caller names the file


def test_read_file_reads_json_and_passes_os_errors(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{"a": [1, 2.5, "\\u00e9"]}', encoding="utf-8")
    assert json_text.read_file(path) == {"a": [1, 2.5, "é"]}
    with pytest.raises(FileNotFoundError):
        json_text.read_file(tmp_path / "missing.json")


@pytest.mark.parametrize(
    "text, kind", [("[1, 2]", "list"), ("3", "int"), ('"x"', "str"), ("null", "NoneType")]
)
def test_read_object_refuses_what_is_not_an_object(tmp_path: Path, text: str, kind: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"must hold a JSON object, got {kind}$"):
        json_text.read_object(path)
    path.write_text('{"k": 1}')
    assert json_text.read_object(path) == {"k": 1}
