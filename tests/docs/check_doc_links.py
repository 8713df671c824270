#!/usr/bin/env python3
"""The repository's docs and comments point at things that exist, and speak of the project as it
is (docs/building.md, "Tested docs"). Two checks, one per CTest test (tests/docs/CMakeLists.txt):

  check_doc_links.py ROOT links       every relative link in a tracked Markdown file names an
                                      existing file, and every #anchor a heading of its target
                                      (GitHub's slugs); in any tracked text file, every
                                      `docs/NAME.md#anchor` and `docs/NAME.md, "Heading"`
                                      reference names a heading of that doc
  check_doc_links.py ROOT narration   no tracked text file dates its text, cites the tracker or
                                      says when or at which commit a figure was taken:
                                      history lives in git log, a figure in docs/performance.md or
                                      docs/building.md with its command

The files are those git tracks or would track (`git ls-files --cached --others
--exclude-standard`) in a git checkout, else every file under ROOT outside build directories.
Each offence is printed as FILE:LINE: what; the exit status is 1 if there is any.
Python 3 standard library only.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

# Legitimate matches of the narration patterns: (path, a regex the offending line must match).
# Keep this list short and say why each entry is here.
NARRATION_ALLOWED: list[tuple[str, str]] = [
    # This checker and its wrapper describe the patterns they look for.
    ("tests/docs/check_doc_links.py", r".*"),
    ("tests/docs/check_doc_links.sh", r".*"),
]

# Section references the links check lets pass: (path, a regex the referring line must match).
LINKS_ALLOWED: list[tuple[str, str]] = []

DATE = r"\b20\d\d-[01]\d-[0-3]\d\b"
ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
    "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|"
    r"twenty-\w+|thirtieth|\d+(?:st|nd|rd|th)"
)
NARRATION_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("a date", re.compile(DATE)),
    ("a tracker reference", re.compile(r"\b[Ii]ssues? #?\d+\b|\b[Ii]ssue-\d+\b|\([Ii]ssue #?\d+\)")),
    ("a dated sitting",
     re.compile(r"\b(?:" + ORDINALS + r"|this|that|the same|last|an earlier|earlier|a later|previous)"
                r"[ -](?:sess" r"ion|sitting)s?\b", re.IGNORECASE)),  # split: this line is no narration
    ("a commit a figure was measured at", re.compile(r"\bcommits? (?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")),
]

BUILD_DIRS = {"build", ".git", ".gpu"}
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# In any text file: docs/NAME.md#anchor, and docs/NAME.md, "Heading" (or docs/NAME.md "Heading").
DOC_ANCHOR_REF = re.compile(r"(?<![\w/.-])((?:\.\./)?docs/[a-z0-9][\w.-]*\.md)#([\w-]+)")
DOC_HEADING_REF = re.compile(r"(?<![\w/.-])((?:\.\./)?docs/[a-z0-9][\w.-]*\.md),? \"([^\"]+)\"")
# A comment continues a quoted heading on its next line: that line without its comment marker.
COMMENT_MARKER = re.compile(r"^\s*(?://+|#+|\*+|--|;+)?\s?")


def tracked_files(root: Path) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            check=True, capture_output=True).stdout
        names = [n for n in out.decode("utf-8", "replace").split("\0") if n]
        return sorted(n for n in names if (root / n).is_file())
    except (OSError, subprocess.CalledProcessError):
        names = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in BUILD_DIRS and not d.startswith("build")]
            for f in filenames:
                names.append(os.path.relpath(os.path.join(dirpath, f), root))
        return sorted(names)


def read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def plain_heading(text: str) -> str:
    """A heading's text as GitHub renders it: links by their text, no code or emphasis marks."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("`", "").replace("**", "").strip()


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation but - and _ dropped, spaces to -."""
    text = plain_heading(text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


class Doc:
    def __init__(self, text: str):
        self.anchors: set[str] = set()
        self.headings: set[str] = set()
        seen: dict[str, int] = {}
        in_fence = None
        for line in text.splitlines():
            fence = FENCE.match(line)
            if fence:
                in_fence = None if in_fence == fence.group(1) else (in_fence or fence.group(1))
                continue
            if in_fence:
                continue
            for a in HTML_ANCHOR.findall(line):
                self.anchors.add(a)
            m = HEADING.match(line)
            if not m:
                continue
            self.headings.add(plain_heading(m.group(2)).lower())
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            self.anchors.add(base if n == 0 else f"{base}-{n}")


def markdown_links(text: str):
    """(line number, target) of every link outside code blocks and code spans."""
    in_fence = None
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if fence:
            in_fence = None if in_fence == fence.group(1) else (in_fence or fence.group(1))
            continue
        if in_fence or line.startswith("    ") and not line.lstrip().startswith(("-", "*", "|")):
            continue
        line = INLINE_CODE.sub("", line)
        for m in LINK.finditer(line):
            yield number, m.group(1)
        m = REFERENCE_DEFINITION.match(line)
        if m:
            yield number, m.group(1)


def check_links(root: Path, files: list[str]) -> list[str]:
    problems: list[str] = []
    docs: dict[Path, Doc | None] = {}
    allowed = [(p, re.compile(r)) for p, r in LINKS_ALLOWED]

    def doc(path: Path) -> Doc | None:
        if path not in docs:
            text = read_text(path)
            docs[path] = Doc(text) if text is not None else None
        return docs[path]

    def check_anchor(where: str, target: Path, anchor: str, shown: str) -> None:
        d = doc(target)
        if d is None or anchor not in d.anchors:
            problems.append(f"{where}: {shown}: no heading in {target.relative_to(root)} has the anchor #{anchor}")

    for name in files:
        if not name.endswith(".md"):
            continue
        path = root / name
        text = read_text(path)
        if text is None:
            continue
        for number, target in markdown_links(text):
            where = f"{name}:{number}"
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue  # a URL (http:, mailto:, ...)
            file_part, _, anchor = target.partition("#")
            if file_part.startswith("/"):
                problems.append(f"{where}: {target}: an absolute path; links are relative to the file")
                continue
            resolved = (path.parent / file_part).resolve() if file_part else path.resolve()
            if not resolved.exists():
                problems.append(f"{where}: {target}: no such file")
                continue
            if anchor:
                if resolved.is_file() and resolved.suffix == ".md":
                    check_anchor(where, resolved, anchor, target)
                else:
                    problems.append(f"{where}: {target}: an anchor into a file that is not Markdown")

    # References from code, scripts and docs to a doc's section.
    for name in files:
        path = root / name
        text = read_text(path)
        if text is None:
            continue
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            where = f"{name}:{number}"
            following = COMMENT_MARKER.sub("", lines[number]) if number < len(lines) else ""
            joined = line + " " + following
            for m in DOC_ANCHOR_REF.finditer(line):
                doc_path = m.group(1).removeprefix("../")
                target = root / doc_path
                if not target.is_file():
                    problems.append(f"{where}: {doc_path}: no such file")
                    continue
                check_anchor(where, target, m.group(2), f"{doc_path}#{m.group(2)}")
            for m in DOC_HEADING_REF.finditer(joined):
                if m.start() >= len(line):
                    break
                if any(p == name and r.search(line) for p, r in allowed):
                    continue
                doc_path = m.group(1).removeprefix("../")
                target = root / doc_path
                if not target.is_file():
                    problems.append(f"{where}: {doc_path}: no such file")
                    continue
                d = doc(target)
                heading = plain_heading(m.group(2)).lower()
                if d is None or heading not in d.headings:
                    problems.append(f"{where}: {doc_path}, \"{m.group(2)}\": {doc_path} has no such heading")
    return problems


def check_narration(root: Path, files: list[str]) -> list[str]:
    problems: list[str] = []
    allowed = [(p, re.compile(r)) for p, r in NARRATION_ALLOWED]
    for name in files:
        text = read_text(root / name)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in NARRATION_PATTERNS:
                m = pattern.search(line)
                if not m:
                    continue
                if any(p == name and r.search(line) for p, r in allowed):
                    continue
                problems.append(f"{name}:{number}: {what} ({m.group(0)!r}): {line.strip()[:160]}")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[2] not in ("links", "narration"):
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[1]).resolve()
    files = tracked_files(root)
    if argv[2] == "links":
        problems = check_links(root, files)
        hint = "fix the link, or the heading it names"
    else:
        problems = check_narration(root, files)
        hint = ("say what the project is and costs now: history lives in git log, a figure in "
                "docs/performance.md or docs/building.md with its command (or, for a legitimate use, "
                "add it to NARRATION_ALLOWED in tests/docs/check_doc_links.py)")
    for p in problems:
        print(p)
    if problems:
        print(f"check_doc_links {argv[2]}: {len(problems)} problem(s): {hint}", file=sys.stderr)
        return 1
    print(f"check_doc_links {argv[2]}: {len(files)} files checked")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
