from agrag.components.errors import AgragError
from agrag.components.loaders.file_failure import FileFailure, UnreadableFileError


def test_an_unreadable_file_carries_its_reason_and_is_no_agrag_error() -> None:
    error = UnreadableFileError("empty file")
    assert error.reason == str(error) == "empty file"
    assert isinstance(error, ValueError)
    assert not isinstance(error, AgragError)
    assert FileFailure("a.md", error.reason) == FileFailure("a.md", "empty file")
