"""The documents' shell recipes, read from their Markdown and run as a user would run them.

A recipe is a fenced block whose info string is `sh` (or `bash`, `shell`, `console`). Every
other fence must name what it holds (```text, ```json, ```output, ...): an unlabelled fence or
an indented code block is an error, so no command escapes the runner by its formatting.

HTML comments just before a recipe (blank lines between are allowed) direct the runner:

* `<!-- not-run: REASON -->` the recipe cannot run here (a real board, flashing, the suite
  itself); the reason is required and shows in the rendered source.
* `<!-- session: NAME -->` this recipe and the document's following ones run together, in order,
  in one shell, apart from the document's other sessions (default session: `main`).
* `<!-- background; ready: COMMAND -->` a long-running program (a daemon, an emulator): the
  recipe runs in the background and the session goes on once COMMAND succeeds.

A fenced ```output block right after a recipe lists lines its output must contain, in order.

Each session runs in a fresh HOME (so fresh data directories: ~/.quill, ~/.bitcoin) with the
repository as working directory, .venv/bin and Bitcoin Core's binaries on PATH and the suite's
build caches (XDG_CACHE_HOME: MicroPython builds, never data), inside its
own network and PID namespaces when the system allows (Core's and Quill's default ports then
never meet another program's, and every process a recipe started ends with the session). One
bash runs the session's recipes in order with `set -eo pipefail`; the first failure ends it.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHELL_LANGS = {"sh", "bash", "shell", "console"}
READY_TIMEOUT_S = 300

_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)\s*$")
_COMMENT = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")
_DIRECTIVE = re.compile(r"^(not-run|session|background)\b\s*:?\s*(.*)$", re.S)
_LIST_ITEM = re.compile(r"^\s*([*+-]|\d+[.)])\s")


class RecipeError(ValueError):
    """A document's recipes are malformed (the message names the file and line)."""


@dataclass
class Recipe:
    doc: str           # path relative to the repository
    line: int          # 1-based line of the opening fence
    code: str
    session: str = "main"
    not_run: str | None = None      # the reason, when marked
    background: str | None = None   # the readiness command, when it runs in the background
    expected: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def _directive(text: str, where: str) -> tuple[str, str] | None:
    match = _DIRECTIVE.match(text)
    if match is None:
        return None
    kind, rest = match.group(1), match.group(2).strip()
    if kind == "not-run" and not rest:
        raise RecipeError(f"{where}: not-run needs a reason")
    if kind == "session" and not re.fullmatch(r"[\w-]+", rest):
        raise RecipeError(f"{where}: session needs a name")
    if kind == "background":
        ready = re.fullmatch(r";?\s*ready:\s*(.+)", rest, re.S)
        if ready is None:
            raise RecipeError(f"{where}: background needs `ready: COMMAND`")
        rest = ready.group(1).strip()
    return kind, rest


def parse(path: Path, root: Path = REPO) -> list[Recipe]:
    """The recipes of one Markdown file, with their directives. Raises RecipeError."""
    doc = str(path.relative_to(root))
    lines = path.read_text(encoding="utf-8").splitlines()
    recipes: list[Recipe] = []
    pending: list[tuple[str, str, int]] = []   # directives waiting for their recipe
    session = "main"
    last_recipe_end = -2                        # line index after which an ```output may follow
    i = 0
    prev_nonblank = ""
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        comment = _COMMENT.match(line)
        if comment:
            found = _directive(comment.group(1), f"{doc}:{i + 1}")
            if found is not None:
                pending.append((found[0], found[1], i + 1))
            i += 1
            continue
        if fence:
            marker, lang = fence.group(2), fence.group(3).lower()
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(marker[:3]):
                end += 1
            if end >= len(lines):
                raise RecipeError(f"{doc}:{i + 1}: unclosed fence")
            body = [ln[len(fence.group(1)):] if ln.startswith(fence.group(1)) else ln for ln in lines[i + 1:end]]
            if not lang:
                raise RecipeError(f"{doc}:{i + 1}: a fence without an info string (```sh for a recipe, "
                                  "```text or another language otherwise)")
            if lang in SHELL_LANGS:
                recipe = Recipe(doc, i + 1, "\n".join(body) + "\n")
                for kind, value, at in pending:
                    if kind == "session":
                        session = value
                    elif kind == "not-run":
                        recipe.not_run = value
                    else:
                        recipe.background = value
                    del at
                if recipe.not_run is not None and recipe.background is not None:
                    raise RecipeError(f"{recipe.where}: a recipe is either not run or run in the background")
                recipe.session = session
                recipes.append(recipe)
                pending = []
                last_recipe_end = end
            else:
                if pending:
                    raise RecipeError(f"{doc}:{pending[0][2]}: a directive before a ```{lang} block, not a recipe")
                if lang == "output":
                    between = lines[last_recipe_end + 1:i]
                    if not recipes or any(b.strip() for b in between):
                        raise RecipeError(f"{doc}:{i + 1}: an ```output block must follow its recipe")
                    recipes[-1].expected = [b.strip() for b in body if b.strip()]
            i = end + 1
            prev_nonblank = "```"
            continue
        if pending and line.strip() and not comment:
            raise RecipeError(f"{doc}:{pending[0][2]}: a directive must come right before its recipe")
        if (line.startswith("    ") and line.strip() and i > 0 and not lines[i - 1].strip()
                and prev_nonblank and not prev_nonblank.startswith((" ", "\t"))
                and not _LIST_ITEM.match(prev_nonblank) and not prev_nonblank.startswith("|")):
            raise RecipeError(f"{doc}:{i + 1}: an indented code block (use a fenced block: ```sh for a recipe)")
        if line.strip():
            prev_nonblank = line
        i += 1
    if pending:
        raise RecipeError(f"{doc}:{pending[0][2]}: a directive with no recipe after it")
    return recipes


def sessions(recipes: list[Recipe]) -> dict[str, list[Recipe]]:
    """The recipes to run, by session, in document order (marked ones left out)."""
    out: dict[str, list[Recipe]] = {}
    for r in recipes:
        if r.not_run is None:
            out.setdefault(r.session, []).append(r)
    return out


# -- running -----------------------------------------------------------------

_PRELUDE = r"""
set -eo pipefail
set -m  # each background recipe in a process group of its own, ended whole
__wait_ready() {  # $1: the command, $2: the background job's pid, $3: its output file
    local deadline=$(( SECONDS + %(timeout)d ))
    until ( eval "$1" ) >/dev/null 2>&1; do
        if ! kill -0 "$2" 2>/dev/null; then
            echo "the background recipe ended before it was ready" >&2; return 1
        fi
        if (( SECONDS > deadline )); then echo "not ready after %(timeout)d s: $1" >&2; return 1; fi
        sleep 0.5
    done
}
__stop_background() {  # end what the recipes started, politely first
    local pid
    for pid in $(jobs -p); do kill -TERM -- "-$pid" 2>/dev/null || true; done
    for _ in $(seq 60); do [ -z "$(jobs -pr)" ] && break; sleep 0.5; done
    for pid in $(jobs -p); do kill -KILL -- "-$pid" 2>/dev/null || true; done
}
trap __stop_background EXIT
trap 'exit 143' TERM  # a session ended from outside still ends what it started
"""


def script(recipes: list[Recipe], work: Path) -> str:
    """One bash script running the session's recipes in order; recipe n's output goes to
    work/out.n, and work/ran gets a line per recipe that finished."""
    parts = [_PRELUDE % {"timeout": READY_TIMEOUT_S}]
    for n, r in enumerate(recipes):
        out = shlex.quote(str(work / f"out.{n}"))
        ran = shlex.quote(str(work / "ran"))
        if r.background is not None:
            parts.append(f"(\n{r.code}) > {out} 2>&1 < /dev/null &\n"
                         f"__wait_ready {shlex.quote(r.background)} $! {out} 2>> {out}\n"
                         f"echo {n} >> {ran}\n")
        else:
            parts.append(f"{{\n{r.code}\n}} > {out} 2>&1 < /dev/null\necho {n} >> {ran}\n")
    return "".join(parts)


def _isolation() -> list[str]:
    """unshare's arguments for private network and PID namespaces, or [] where not allowed."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        return []
    for prefix in ([unshare, "--net", "--pid", "--fork", "--kill-child"],
                   [unshare, "--map-root-user", "--net", "--pid", "--fork", "--kill-child"]):
        probe = subprocess.run([*prefix, ip, "link", "set", "lo", "up"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return prefix
    return []


@dataclass
class Outcome:
    ran: int                       # recipes that finished
    failed: Recipe | None          # the recipe that failed, if one did
    output: str                    # the failed recipe's output (or the session's error)
    missing: list[tuple[Recipe, str]] = field(default_factory=list)  # expected lines not found

    @property
    def ok(self) -> bool:
        return self.failed is None and not self.missing


def environment(home: Path, extra_path: list[Path]) -> dict[str, str]:
    # a user's terminal: none of the suite's settings, nor `make test`'s own (MAKEFLAGS, MAKELEVEL)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("QUILL_", "BITCOIN", "PYTEST", "MAKE", "MFLAGS"))}
    # Builds are cached, not data: MicroPython's qemu and frozen builds and the native module keep
    # their caches where the suite's other tests keep them (XDG_CACHE_HOME, else ~/.cache).
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = os.pathsep.join([*map(str, extra_path), env.get("PATH", "/usr/bin:/bin")])
    env.update(HOME=str(home), XDG_CACHE_HOME=cache, PATH=path)
    env.pop("VIRTUAL_ENV", None)
    return env


def run_session(recipes: list[Recipe], work: Path, extra_path: list[Path], timeout: float = 1800,
                cwd: Path = REPO) -> Outcome:
    """Run one session's recipes (see `script`) in a fresh HOME under `work`."""
    home = work / "home"
    home.mkdir(parents=True)
    (work / "script.sh").write_text(script(recipes, work))
    isolation = _isolation()
    inner = ["bash", str(work / "script.sh")]
    if isolation:
        inner = ["bash", "-c", 'ip link set lo up && exec bash "$0"', str(work / "script.sh")]
    proc = subprocess.Popen([*isolation, *inner], cwd=cwd, env=environment(home, extra_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, session_error = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.communicate(timeout=5)  # bash runs its TERM trap only between commands
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        session_error = f"the session took more than {timeout} s"
    ran_file = work / "ran"
    ran = len(ran_file.read_text().split()) if ran_file.exists() else 0
    if ran < len(recipes):
        out_file = work / f"out.{ran}"
        output = out_file.read_text(errors="replace") if out_file.exists() else ""
        return Outcome(ran, recipes[ran], (output + "\n" + session_error).strip())
    missing = []
    for n, r in enumerate(recipes):
        text = (work / f"out.{n}").read_text(errors="replace")
        at = 0
        for want in r.expected:
            found = text.find(want, at)
            if found < 0:
                missing.append((r, want))
                break
            at = found + len(want)
    return Outcome(ran, None, "", missing)
