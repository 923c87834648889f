"""`POST /api/files/content {path, workingDirectory}` as the newest Claude Companion app calls it when
the user taps a file path in an answer (companion-http.md §2, row 7; the app's `FileContentService`
decodes `{success, content: {filename, content, mimeType, size (Int), encoding}, warning?}` and maps
401/403/404/413 itself, showing `message` for other statuses). Confined to the projects root."""
import os
import time

from companion_client import real, rest, rest_json, start_companion


def decoded(answer: dict) -> dict:
    """What the app's decoder requires of a 200."""
    assert answer["success"] is True, answer
    content = answer["content"]
    assert {type(content[k]) for k in ("filename", "content", "mimeType", "encoding")} == {str}, content
    assert isinstance(content["size"], int), content
    return content


def test_a_file_by_path_or_by_bare_name_is_shown_with_its_type(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path)
    app = relay.projects / "app"
    (app / "Sources").mkdir()
    (app / "Sources" / "main.swift").write_text("print(\"hi\")\n")
    (app / "README.md").write_text("# App\n")
    shown = decoded(rest_json(relay, "POST", "/api/files/content", body={"path": "Sources/main.swift", "workingDirectory": real(app)}))
    assert shown == {"filename": "main.swift", "content": "print(\"hi\")\n", "mimeType": "text/x-swift", "size": 12,
                     "encoding": "utf-8"}, shown
    absolute = decoded(rest_json(relay, "POST", "/api/files/content", body={"path": real(app / "README.md"), "workingDirectory": real(app)}))
    assert absolute["mimeType"] == "text/markdown" and absolute["content"] == "# App\n", absolute
    # A bare name is looked for in the project (not in hidden folders); the newest of several wins.
    (app / "docs").mkdir()
    (app / "docs" / "README.md").write_text("# Newer\n")
    os.utime(app / "README.md", (time.time() - 3600, time.time() - 3600))
    (app / ".git").mkdir()
    (app / ".git" / "README.md").write_text("never this one\n")
    answer = rest_json(relay, "POST", "/api/files/content", body={"path": "README.md", "workingDirectory": real(app)})
    assert decoded(answer)["content"] == "# Newer\n", answer
    warning = answer["warning"]
    assert warning["type"] == "DUPLICATE_FILENAMES" and [d["relativePath"] for d in warning["duplicates"]] == ["docs/README.md", "README.md"], warning
    assert all(isinstance(d["size"], int) and d["lastModified"].endswith("Z") for d in warning["duplicates"]), warning


def test_outside_the_root_large_binary_and_missing_files_are_refused_as_the_app_maps_them(relay_factory, tmp_path):
    relay = start_companion(relay_factory, tmp_path)
    app = relay.projects / "app"
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours\n")
    (app / "link.txt").symlink_to(outside)
    (app / "big.txt").write_text("x" * ((1 << 20) + 1))
    (app / "blob.txt").write_bytes(b"\x00\x01\x02")
    (app / "photo.png").write_bytes(b"\x89PNG")
    cases = [
        ({"path": "../../secret.txt", "workingDirectory": real(app)}, 403, "PATH_VALIDATION_FAILED"),
        ({"path": real(outside), "workingDirectory": real(app)}, 403, "PATH_VALIDATION_FAILED"),
        ({"path": "./link.txt", "workingDirectory": real(app)}, 403, "PATH_VALIDATION_FAILED"),
        ({"path": "link.txt", "workingDirectory": real(app)}, 404, "FILE_NOT_FOUND"),  # a bare name never follows a symlink
        ({"path": "./big.txt", "workingDirectory": real(app)}, 413, "FILE_TOO_LARGE"),
        ({"path": "./blob.txt", "workingDirectory": real(app)}, 415, "BINARY_FILE"),
        ({"path": "./photo.png", "workingDirectory": real(app)}, 415, "UNSUPPORTED_FILE_TYPE"),
        ({"path": "./nothing.txt", "workingDirectory": real(app)}, 404, "FILE_NOT_FOUND"),
        ({"path": "./", "workingDirectory": real(app)}, 400, "IS_DIRECTORY"),
        ({"path": "", "workingDirectory": real(app)}, 400, "INVALID_PATH"),
        ({"path": "x.txt", "workingDirectory": str(tmp_path)}, 400, "INVALID_WORKING_DIRECTORY"),
    ]
    for body, status, error in cases:
        answer = rest_json(relay, "POST", "/api/files/content", status=status, body=body)
        assert answer["success"] is False and answer["error"] == error and isinstance(answer["message"], str), (body, answer)
    assert rest(relay, "POST", "/api/files/content", body={"path": "x"}, token=None).status == 401
