"""The package's structure, from its imports (parsed with ast, relative and absolute, at module
level and inside functions):

- the layer order is the README's Architecture diagram: each line of module names is a tier,
  the top line the highest; a module imports only from its own tier or the ones below, and no
  module imports itself back through others;
- each installable piece (the package-*.json files, made from manifests/) holds the files it
  lists, and its modules import only modules of the piece and the outside packages it names.
"""

import ast
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import gen_package_json  # noqa: E402

PKG = os.path.join(ROOT, "claw_memory")

# Modules of MicroPython's firmware (built in, or frozen like asyncio), which every piece may
# import. traceback is imported by _compat's CPython branch only; math (ranked recall's
# logarithm) is in every ESP32 firmware and in the unix port; so is collections (core.Tool's
# namedtuple: MICROPY_PY_COLLECTIONS from the core-features level up).
FIRMWARE = {"array", "asyncio", "binascii", "collections", "errno", "gc", "hashlib", "io", "json", "math", "micropython", "re",
            "os", "ssl", "struct", "sys", "time", "tls", "traceback"}
# Imports inside a function that leave a piece on purpose: (module, imported) -> why.
OPTIONAL = {
    ("claw_memory.memory", "claw_memory.store"): "mode='full' only (LITE: when the store is installed)",
    ("claw_memory.memory", "claw_memory.extract"): "mode='full' only",
    ("claw_memory.wiring", "claw_memory.memory_tools"): "mode='full' only",
    ("claw_memory.wiring", "claw_memory.memory_text"): "mode='full' only (/memory commands)",
    ("claw_memory.inspect", "claw_memory.provenance"): "an item's origin: a root with a store only",
    ("claw_memory.inspect", "claw_memory.memory_text"): "why(): a root with a store only",
}


def _files():
    out = []
    for dirpath, dirnames, names in os.walk(PKG):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out += [os.path.relpath(os.path.join(dirpath, n), PKG).replace(os.sep, "/")
                for n in sorted(names) if n.endswith(".py")]
    return sorted(out)


def _module(rel):
    """claw_memory/x/y.py -> claw_memory.x.y (a package's __init__.py -> the package)."""
    parts = ["claw_memory"] + rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module(f): f for f in _files()}


def imports(rel):
    """[(imported module, line, inside a function)] of a file under claw_memory/."""
    name = _module(rel)
    package = name if rel.endswith("__init__.py") else name.rpartition(".")[0]
    with open(os.path.join(PKG, rel), encoding="utf-8") as f:
        tree = ast.parse(f.read(), rel)
    out = []

    def visit(node, lazy):
        for n in ast.iter_child_nodes(node):
            inner = lazy or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(n, ast.Import):
                out.extend((a.name, n.lineno, inner) for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                if n.level:
                    base = package.split(".")[: len(package.split(".")) - n.level + 1]
                    target = ".".join(base + ([n.module] if n.module else []))
                else:
                    target = n.module
                for a in n.names:  # `from . import x`: x may be a module of the package
                    sub = target + "." + a.name
                    out.append((sub if sub in MODULES else target, n.lineno, inner))
            visit(n, inner)

    visit(tree, False)
    return sorted(set(out), key=lambda x: (x[1], x[0]))


def _own(imported):
    return imported == "claw_memory" or imported.startswith("claw_memory.")


# -- the layer order -----------------------------------------------------------------------


def diagram():
    """[(tier line number, [entries])] of the README's Architecture diagram, top first; an
    entry is a module (`agent.py`) or a package (`session/`)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme.split("\n## Architecture\n", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S).group(1)
    tiers = []
    for n, line in enumerate(block.splitlines(), 1):
        if not line or line[0].isspace():
            continue  # a description's continuation
        entries = []
        for tok in line.split():
            if not re.match(r"^[A-Za-z_]\w*(\.py|/)$", tok):
                break
            entries.append(tok)
        assert entries, "diagram line %d names no module: %r" % (n, line)
        tiers.append((n, entries))
    return tiers


def tier_table():
    """{module file under claw_memory/: (tier index, 0 = the top, entry)}"""
    table = {}
    for index, (_, entries) in enumerate(diagram()):
        for e in entries:
            table[e] = index
    out = {}
    for f in MODULES.values():
        head = f.split("/", 1)[0] + "/" if "/" in f else f
        if head in table:
            out[f] = (table[head], head)
    return out, table


def test_the_diagram_draws_every_module_once_and_nothing_else():
    tiers = diagram()
    entries = [e for _, es in tiers for e in es]
    assert len(entries) == len(set(entries)), "drawn twice: %s" % sorted(
        {e for e in entries if entries.count(e) > 1})
    for e in entries:
        path = os.path.join(PKG, e)
        assert os.path.isdir(path) if e.endswith("/") else os.path.isfile(path), (
            "the README's Architecture diagram draws %s, which claw_memory/ does not have" % e)
    table, _ = tier_table()
    missing = sorted(f for f in MODULES.values() if f not in table)
    assert not missing, "not in the README's Architecture diagram: %s" % ", ".join(
        "claw_memory/" + f for f in missing)
    assert len(tiers) >= 6


def upward(imports_of=imports):
    """The imports against the diagram's layer order, each named by file and line."""
    table, _ = tier_table()
    names = {i: " ".join(es) for i, (_, es) in enumerate(diagram())}
    wrong = []
    for mod, f in sorted(MODULES.items()):
        if f not in table:
            continue  # undrawn: test_the_diagram_draws_every_module_once_and_nothing_else
        mine, _ = table[f]
        for imported, line, _ in imports_of(f):
            if not _own(imported):
                continue
            assert imported in MODULES, "claw_memory/%s:%d imports %s, which does not exist" % (
                f, line, imported)
            theirs, _ = table.get(MODULES[imported], (mine, None))
            if theirs < mine:
                wrong.append("claw_memory/%s:%d imports %s (tier '%s'), above its own tier '%s'" % (
                    f, line, imported, names[theirs], names[mine]))
    return wrong


def test_dependencies_point_downward():
    wrong = upward()
    assert not wrong, "imports against the README's Architecture diagram:\n" + "\n".join(wrong)


def test_no_import_cycle():
    graph = {m: sorted({i for i, _, _ in imports(f) if _own(i) and i != m}) for m, f in MODULES.items()}
    state = {}
    cycles = []

    def walk(m, stack):
        state[m] = 1
        stack.append(m)
        for n in graph[m]:
            if state.get(n) == 1:
                cycles.append(" -> ".join(stack[stack.index(n):] + [n]))
            elif n not in state:
                walk(n, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            walk(m, [])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_layer_check_names_the_offending_import():
    # A module of the bottom tier importing the facade is reported with its file and line.
    table, _ = tier_table()
    assert table["text.py"][0] > table["memory.py"][0] > table["agent.py"][0]
    wrong = upward(lambda f: imports(f) + ([("claw_memory.memory", 7, False)] if f == "text.py" else []))
    assert [w for w in wrong if w.startswith("claw_memory/text.py")] == ["claw_memory/text.py:7 imports claw_memory.memory (tier '__init__.py memory.py wiring.py'), "
                     "above its own tier 'text.py jsonraw.py jsontail.py terms.py dates.py fsutil.py paths.py _compat.py'"], wrong


# -- the installable pieces ----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(gen_package_json.PIECES))
def test_package_file_is_generated_and_names_existing_files(name):
    import json

    with open(os.path.join(ROOT, name)) as f:
        text = f.read()
    assert text == gen_package_json.render(name), (
        "%s is out of date: run python3 tools/gen_package_json.py" % name)
    pj = json.loads(text)
    for dst, src in pj["urls"]:
        assert dst == src and os.path.isfile(os.path.join(ROOT, src)), (name, src)
    assert pj["version"] == gen_package_json.version()


def test_the_pieces():
    import json

    def load(name):
        with open(os.path.join(ROOT, name)) as f:
            pj = json.load(f)
        return {u[0][len("claw_memory/"):] for u in pj["urls"]}, pj["deps"]

    lite, lite_deps = load("package-lite.json")
    full, full_deps = load("package-full.json")
    agent, agent_deps = load("package-agent.json")
    llm, llm_deps = load("package-llm.json")
    every, every_deps = load("package.json")
    assert lite < full and lite < agent and lite < llm, "each piece installs with lite"
    assert full - lite == {"extract.py", "item.py", "memory_tools.py", "memory_text.py", "provenance.py"} | {
        f for f in MODULES.values() if f.startswith("store/")}
    assert agent - lite == {"agent.py"}
    assert llm - lite == {f for f in MODULES.values() if f.startswith("llm/")}
    assert full | agent | llm == every == set(MODULES.values()), "every module in a piece"
    assert lite_deps == full_deps == agent_deps == [], "only the LLM clients need aiohttp"
    assert llm_deps == every_deps == [["aiohttp", "latest"]]


@pytest.mark.parametrize("name", sorted(gen_package_json.PIECES))
def test_a_piece_imports_only_itself_and_what_it_names(name):
    import json

    with open(os.path.join(ROOT, name)) as f:
        pj = json.load(f)
    files = [u[0][len("claw_memory/"):] for u in pj["urls"]]
    mods = {_module(f) for f in files}
    outside = FIRMWARE | {d[0] for d in pj["deps"]}
    wrong = []
    for f in files:
        for imported, line, lazy in imports(f):
            where = "claw_memory/%s:%d imports %s" % (f, line, imported)
            if _own(imported):
                if imported not in mods and not (lazy and (_module(f), imported) in OPTIONAL):
                    wrong.append(where + ", which %s does not hold" % name)
            elif imported.split(".")[0] not in outside:
                wrong.append(where + ", which is neither in the firmware nor a dep of %s" % name)
    assert not wrong, "\n".join(wrong)


def test_optional_imports_are_real_and_inside_functions():
    for (mod, imported), why in OPTIONAL.items():
        got = [lazy for i, _, lazy in imports(MODULES[mod]) if i == imported]
        assert got and all(got), "%s imports %s at module level (%s)" % (mod, imported, why)
