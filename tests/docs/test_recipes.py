"""Every shell recipe of README.md, boards/README.md and docs/*.md, run as written (tests/docs/recipes.py).

One test per document session: its recipes run in order in a fresh HOME, with the real quilld,
quill-emu and Bitcoin Core. A recipe that fails, or whose output lacks what the document shows,
fails the test. A recipe that cannot run here is marked `<!-- not-run: REASON -->` in the text;
nothing else is left out.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs import recipes
from tests.kit.toolchains import bitcoind_path

REPO = recipes.REPO
VENV_BIN = REPO / ".venv" / "bin"

# Sessions that cannot pass yet, each with its reason, run as xfail (none today).
PENDING_ON_THIS_BRANCH: dict[tuple[str, str], str] = {}


def documents() -> list[Path]:
    return [REPO / "README.md", REPO / "boards" / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _cases() -> list[object]:
    cases: list[object] = []
    for path in documents():
        doc = str(path.relative_to(REPO))
        try:
            found = recipes.sessions(recipes.parse(path))
        except recipes.RecipeError:
            continue  # test_documents_parse names the error
        for name, session in found.items():
            marks = []
            if (doc, name) in PENDING_ON_THIS_BRANCH:
                marks.append(pytest.mark.xfail(reason=PENDING_ON_THIS_BRANCH[(doc, name)], strict=False))
            cases.append(pytest.param(doc, name, session, id=f"{doc}::{name}", marks=marks))
    return cases


def test_documents_parse_and_every_recipe_is_run_or_marked() -> None:
    total = marked = 0
    for path in documents():
        found = recipes.parse(path)  # raises on an unlabelled fence, an indented block, a stray directive
        # counted independently of the parser: no recipe fence is skipped
        fences = re.findall(r"^\s*```+\s*(?:sh|bash|shell|console)\s*$", path.read_text(), flags=re.M)
        assert len(found) == len(fences), path
        run = sum(len(s) for s in recipes.sessions(found).values())
        assert run + sum(r.not_run is not None for r in found) == len(found), path
        total += len(found)
        marked += sum(r.not_run is not None for r in found)
    # The README's front door alone has more than a dozen recipes; most of them run.
    assert total >= 20 and total - marked >= 15, (total, marked)


def test_every_reference_document_is_linked_from_the_readme() -> None:
    readme = (REPO / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)(?:#[\w-]*)?\)", readme))
    present = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert present and present <= linked, sorted(present - linked)
    assert "boards/README.md" in readme


def test_pending_sessions_exist() -> None:
    """A pending entry that names no session would hide nothing and go stale."""
    ids = {(c.values[0], c.values[1]) for c in _cases()}  # type: ignore[attr-defined]
    assert set(PENDING_ON_THIS_BRANCH) <= ids


@pytest.mark.parametrize(("doc", "session", "session_recipes"), _cases())
def test_recipes_run_as_written(doc: str, session: str, session_recipes: list[recipes.Recipe],
                                tmp_path: Path) -> None:
    extra_path = [VENV_BIN]
    if any(re.search(r"\bbitcoin(d|-cli)\b", r.code) for r in session_recipes):
        extra_path.append(bitcoind_path().parent)  # skips (fails in CI) without Core
    outcome = recipes.run_session(session_recipes, tmp_path, extra_path)
    if outcome.failed is not None:
        pytest.fail(f"{outcome.failed.where} failed (recipe {outcome.ran + 1} of {len(session_recipes)} in "
                    f"session {session}):\n{outcome.failed.code}\n--- its output ---\n{outcome.output[-6000:]}",
                    pytrace=False)
    assert outcome.ran == len(session_recipes)
    for recipe, line in outcome.missing:
        pytest.fail(f"{recipe.where}: the output lacks {line!r}", pytrace=False)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _links(path: Path) -> list[tuple[str, bool]]:
    """(target, is_image) of every relative Markdown link of a document, code spans left out."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [(m.group(2), m.group(1) == "!") for m in re.finditer(r"(!?)\[[^\]]*\]\(([^)\s]+)\)", text)
            if not re.match(r"[a-z]+:", m.group(2))]


def test_links_between_the_documents_resolve() -> None:
    checked = 0
    for path in documents():
        for target, is_image in _links(path):
            if is_image:
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            assert linked.exists(), f"{path.relative_to(REPO)}: {target}"
            if anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", linked.read_text(), flags=re.M)
                assert anchor in {_slug(h) for h in headings}, f"{path.relative_to(REPO)}: {target}"
            checked += 1
    assert checked >= 20


def test_the_pictures_exist() -> None:
    images = {(path.parent / target).resolve() for path in documents() for target, is_image in _links(path)
              if is_image}
    assert images and all(p.exists() for p in images), sorted(str(p.relative_to(REPO)) for p in images)
