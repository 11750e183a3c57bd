"""The recipe runner itself (tests/docs/recipes.py): it must be able to fail."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.docs import recipes


def _doc(tmp_path: Path, text: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "doc.md"
    path.write_text(text)
    return path


def _parse(tmp_path: Path, text: str) -> list[recipes.Recipe]:
    return recipes.parse(_doc(tmp_path, text), tmp_path)


def test_directives_attach_to_the_next_recipe(tmp_path: Path) -> None:
    found = _parse(tmp_path, "text\n\n```sh\necho a\n```\n\n```output\na\n```\n\n"
                             "<!-- not-run: needs a real board -->\n\n```sh\nflash\n```\n\n"
                             "<!-- session: other -->\n<!-- background; ready: test -e x -->\n```bash\nserve\n```\n"
                             "\n```json\n{}\n```\n")
    assert [(r.code, r.session, r.not_run, r.background, r.expected) for r in found] == [
        ("echo a\n", "main", None, None, ["a"]),
        ("flash\n", "main", "needs a real board", None, []),
        ("serve\n", "other", None, "test -e x", [])]
    assert {k: [r.code for r in v] for k, v in recipes.sessions(found).items()} == {
        "main": ["echo a\n"], "other": ["serve\n"]}


@pytest.mark.parametrize("text", [
    "```\nmake start\n```\n",                                  # a fence that does not say what it holds
    "Run this:\n\n    make start\n",                           # an indented code block
    "<!-- not-run: -->\n```sh\nx\n```\n",                      # no reason
    "<!-- not-run: board -->\n\nsome text\n\n```sh\nx\n```\n",  # the marker is not right before its recipe
    "<!-- not-run: board -->\n",                               # a marker with nothing after it
    "<!-- not-run: board -->\n```json\n{}\n```\n",             # a marker on what is not a recipe
    "```sh\nx\n```\ntext\n```output\nx\n```\n",                # output away from its recipe
    "<!-- background -->\n```sh\nx\n```\n",                    # background without its readiness check
    "```sh\nunclosed\n",
])
def test_malformed_documents_are_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(recipes.RecipeError):
        _parse(tmp_path, text)


def test_list_continuations_are_not_code(tmp_path: Path) -> None:
    assert _parse(tmp_path, "1. **Builds.** It compiles\n\n    more of the item\n") == []


def _run(tmp_path: Path, text: str) -> recipes.Outcome:
    found = recipes.sessions(_parse(tmp_path, text))["main"]
    return recipes.run_session(found, tmp_path / "work", [], timeout=120, cwd=tmp_path)


def test_a_failing_command_fails_its_recipe_and_ends_the_session(tmp_path: Path) -> None:
    outcome = _run(tmp_path, "```sh\necho one\n```\n\n```sh\necho two\nfalse\necho never\n```\n\n"
                             "```sh\necho three\n```\n")
    assert not outcome.ok and outcome.ran == 1 and outcome.failed is not None
    assert outcome.failed.code.startswith("echo two") and "never" not in outcome.output


def test_a_pipeline_fails_when_any_part_fails(tmp_path: Path) -> None:
    assert not _run(tmp_path, "```sh\nfalse | cat\n```\n").ok


def test_missing_expected_output_fails(tmp_path: Path) -> None:
    outcome = _run(tmp_path, "```sh\necho hello world\n```\n\n```output\nhello there\n```\n")
    assert outcome.failed is None and outcome.missing and not outcome.ok
    assert _run(tmp_path / "b", "```sh\necho hello; echo world\n```\n```output\nhello\nworld\n```\n").ok


def test_variables_carry_from_recipe_to_recipe_in_a_fresh_home(tmp_path: Path) -> None:
    outcome = _run(tmp_path, "```sh\nA=$HOME\ntest ! -e ~/.quill\n```\n\n```sh\n"
                             f'test "$A" = "$HOME" && test "$HOME" != {os.environ.get("HOME", "/root")}\n```\n')
    assert outcome.ok, outcome.output


def test_background_recipes_become_ready_and_end_with_the_session(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    text = (f"<!-- background; ready: test -s {pidfile} -->\n```sh\necho $BASHPID > {pidfile}; sleep 600\n```\n\n"
            f"```sh\nkill -0 $(cat {pidfile})\n```\n")
    outcome = _run(tmp_path, text)
    assert outcome.ok, outcome.output
    # a background recipe that dies before it is ready fails
    outcome = _run(tmp_path / "b", "<!-- background; ready: false -->\n```sh\nexit 3\n```\n")
    assert outcome.failed is not None and "ended before it was ready" in outcome.output


def test_a_session_that_hangs_is_ended(tmp_path: Path) -> None:
    found = recipes.sessions(_parse(tmp_path, "```sh\nsleep 600\n```\n"))["main"]
    outcome = recipes.run_session(found, tmp_path / "work", [], timeout=3, cwd=tmp_path)
    assert outcome.failed is not None and "more than 3 s" in outcome.output
