"""Every reference in the repository resolves inside it: no pointer to files a user of the project
does not have, every "§N" cite names a paragraph of docs/DESIGN.md's appendix, every
"deliberate difference N" one of its numbered differences, and every repository path the
user-facing files name exists."""

import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DESIGN = os.path.join(ROOT, "docs", "DESIGN.md")
# Files that may name the trees CI lays beside the repository (test-only inputs, documented).
VENDOR_OK = {".ci/run", "tools/build_mp32.py", "tests_host/test_build_mp32.py", "tools/heap32.py",
             "tests_host/test_heap32.py", "CHANGELOG.md"}
USER_FACING = ("claw_memory/", "claw_memory_cli/", "docs/", "examples/", "README.md")


def _files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [f for f in out.stdout.split() if f.endswith((".py", ".md", ".sh", ".toml", ".json"))
            or f == ".ci/run"]


def _text(f):
    with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _paragraphs():
    """The appendix's paragraph numbers, as (major, lo, hi) ranges."""
    out = []
    for m in re.finditer(r"^\*\*§(\d+)(?:\.(\d+))?(?:-\d+\.(\d+))? ", _text("docs/DESIGN.md"), re.M):
        major, lo, hi = int(m.group(1)), m.group(2), m.group(3)
        lo = int(lo) if lo else None
        out.append((major, lo, int(hi) if hi else lo))
    return out


def _resolves(cite, paras):
    major, _, minor = cite.partition(".")
    major = int(major)
    for m, lo, hi in paras:
        if m == major and (not minor or lo is not None and lo <= int(minor) <= hi
                           or not minor and lo is None):
            return True
    return False


def test_nothing_points_outside_the_repository():
    bad = []
    for f in _files():
        if f in VENDOR_OK:
            continue
        for n, line in enumerate(_text(f).splitlines(), 1):
            if re.search(r"\.\./shared\b|shared/(reference|DESIGN\.md|tools/micropython32)", line):
                bad.append("%s:%d: %s" % (f, n, line.strip()))
    assert not bad, "references to files outside the repository:\n" + "\n".join(bad)


def test_every_section_cite_names_a_paragraph_of_the_design():
    paras = _paragraphs()
    assert paras, "docs/DESIGN.md has no appendix paragraphs"
    bad = []
    for f in _files():
        if f == "CHANGELOG.md":
            continue
        for n, line in enumerate(_text(f).splitlines(), 1):
            for m in re.finditer(r"§(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?", line):
                for cite in filter(None, m.groups()):
                    if not _resolves(cite, paras):
                        bad.append("%s:%d: §%s" % (f, n, cite))
    assert not bad, "cites with no paragraph in docs/DESIGN.md's appendix:\n" + "\n".join(bad)


def test_every_deliberate_difference_cited_exists():
    design = _text("docs/DESIGN.md")
    sect = design[design.index("## 8."):design.index("## Appendix A")]
    numbers = {int(m.group(1)) for m in re.finditer(r"^(\d+)\. \*\*", sect, re.M)}
    assert numbers == set(range(1, max(numbers) + 1)), "differences numbered 1..N without gaps"
    bad = []
    for f in _files():
        s = _text(f)
        for m in re.finditer(r"deliberate differences? ((?:\d+(?:,? and |, )?)+)", s):
            for num in re.findall(r"\d+", m.group(1)):
                if int(num) not in numbers:
                    bad.append("%s: deliberate difference %s" % (f, num))
        for m in re.finditer(r"(?<!docs/)DESIGN\.md", s):
            # this file quotes the rule it checks
            if f not in ("docs/DESIGN.md", "tests_host/test_references.py") and not s[max(m.start() - 5, 0):m.start()].endswith("docs/"):
                bad.append("%s: names DESIGN.md without its folder (docs/DESIGN.md)" % f)
    assert not bad, "\n".join(sorted(set(bad)))


def test_repository_paths_in_user_facing_files_exist():
    pat = re.compile(r"(?<![\w/.-])((?:claw_memory|claw_memory_cli|tools|tests_host|tests_device|docs|"
                     r"examples|boards|manifests)/[\w./-]*\w)(?![\w*])")
    bad = []
    for f in _files():
        if not f.startswith(USER_FACING):
            continue
        for n, line in enumerate(_text(f).splitlines(), 1):
            for m in pat.finditer(line):
                p = m.group(1)
                if not os.path.exists(os.path.join(ROOT, p)):
                    bad.append("%s:%d: %s" % (f, n, p))
    assert not bad, "paths that do not exist:\n" + "\n".join(bad)
