#!/usr/bin/env python3
"""Mutation testing for claw_memory: does the suite notice a plausible bug?

    python tools/mutate.py                          # every mutant (tens of minutes)
    python tools/mutate.py --module session/repair  # the mutants of one module (or a package: session)
    python tools/mutate.py --sample 10 --seed 3     # a random sample
    python tools/mutate.py --only store/store:3     # named mutants
    python tools/mutate.py --check                  # only check that every mutant still applies
    python tools/mutate.py --ignore 'tests_host/mp/test_*_powercut.py'   # the suite without some files

The mutants are substitutions listed in tools/mutants.py: (module, exact source text before,
text after, description[, "equivalent: <argument>"]). Each is applied alone to a scratch copy
of the repository (never to the working tree); `before` must occur exactly once in the module,
else the mutant is reported STALE and skipped (refresh it after the code moved on). Stage 1
runs the test modules mapped to the mutated module (TESTS below); a failing, crashing or
hanging test kills the mutant. Stage 2 runs the survivors against the whole suite. Mutants
argued equivalent are not run and not counted. The score of a module is killed / counted.

It is a tool, not part of CI. Run it from the repository's .venv (python3 tools/dev.py setup);
two workers (--jobs 2) fit a 2-core machine.
"""

import argparse
import glob
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

# Source module (path under claw_memory/ without .py, or a package prefix ending in "/") ->
# the test files run in stage 1. The most specific key wins. Only speed depends on this map:
# survivors always meet the whole suite in stage 2.
_MP = "tests_host/mp/"
_SESSION = [_MP + "test_session.py", _MP + "test_session_limits.py", _MP + "test_session_repair.py",
            _MP + "test_session_opens.py", _MP + "test_session_powercut.py", _MP + "test_golden.py",
            _MP + "test_stream.py", _MP + "test_handover_session.py", _MP + "test_session_lifecycle.py",
            _MP + "test_session_records.py", _MP + "test_session_pending.py",
            _MP + "test_handover_behind.py", _MP + "test_history_shared.py", _MP + "test_session_pcopy.py",
            "tests_host/test_session_heap32.py"]
_STREAM = [_MP + "test_stream.py", _MP + "test_session.py", _MP + "test_session_limits.py",
           _MP + "test_session_opens.py", _MP + "test_agent.py", _MP + "test_llm.py", "tests_host/test_llm.py",
           _MP + "test_session_records.py", _MP + "test_history_shared.py", _MP + "test_session_powercut.py",
           "tests_host/test_llm_mp.py"]
_STORE = [_MP + "test_store.py", _MP + "test_store_items.py", _MP + "test_store_ranking.py",
          _MP + "test_store_labels.py", _MP + "test_store_espclaw_files.py", _MP + "test_store_powercut.py",
          _MP + "test_golden.py", _MP + "test_store_faults.py", _MP + "test_store_derived.py",
          _MP + "test_prompt_values.py", _MP + "test_store_catalog.py", _MP + "test_undo.py", _MP + "test_provenance.py",
          _MP + "test_expiry.py", _MP + "test_undo_powercut.py"]
_TRUST = [_MP + "test_undo.py", _MP + "test_provenance.py", _MP + "test_expiry.py", _MP + "test_incognito.py",
          "tests_host/test_prompt_unchanged.py"]
_SEARCH = [_MP + "test_search.py", _MP + "test_search_edges.py", _MP + "test_search_merge.py",
           _MP + "test_search_powercut.py",
           _MP + "test_search_faults.py", _MP + "test_search_kept.py", _MP + "test_search_folder.py",
           "tests_host/test_text_cpython.py",
           _MP + "test_provenance.py",
           "tests_host/test_search_bench.py", "tests_host/test_search_heap32.py"]
_LLM_MP = "tests_host/test_llm_mp.py"
_LLM = ["tests_host/test_llm.py", _MP + "test_llm.py", _LLM_MP, _MP + "test_agent.py"]
TESTS = {
    "session/": _SESSION,
    "session/sessions": _SESSION + [_MP + "test_lifecycle_powercut.py", _MP + "test_session_faults.py", _LLM_MP,
                                    _MP + "test_incognito.py", _MP + "test_search.py",
                                    _MP + "test_search_edges.py", _MP + "test_search_merge.py"],
    "session/restore": ["tests_host/test_cli.py", "tests_host/test_bundle_fields.py"],
    "session/recatalog": ["tests_host/test_cli.py", _MP + "test_search_powercut.py", _MP + "test_search_folder.py"],
    "session/listing": _SESSION + [_MP + "test_inspect.py", _MP + "test_search.py", _MP + "test_search_edges.py"],
    "session/stream": _STREAM,
    "session/plan": _STREAM,
    "session/flat": _STREAM,
    "session/flatmsg": _STREAM,
    "session/window": _STREAM,
    "store/": _STORE,
    "store/rank": [_MP + "test_recall_rank.py", _MP + "test_store_faults.py"],
    "session/format": _SESSION + _SEARCH,
    "session/tix": _SEARCH,
    "session/tixmerge": _SESSION + _SEARCH,
    "session/indexer": _SEARCH,
    "session/adopt": _SEARCH,
    "session/remap": _SESSION + _SEARCH,
    "session/search": _SEARCH,
    "session/held": _SEARCH,
    "session/hits": _SEARCH,
    "session/archive": _SEARCH + [_MP + "test_session_pending.py", _MP + "test_handover_behind.py"],
    "session/heads": _SEARCH + [_MP + "test_handover_behind.py"],
    "session/compact": _SESSION + _SEARCH,
    "session/replay": _SESSION + [_MP + "test_search.py", _MP + "test_search_edges.py"],
    "session/deletion": _SESSION + _SEARCH + [_MP + "test_lifecycle_powercut.py", _MP + "test_session_faults.py",
                                              _LLM_MP, _MP + "test_incognito.py"],
    "session/repair": _SESSION + _SEARCH + [_LLM_MP],
    "session/origin": _TRUST,
    "session/ram": _TRUST,
    "dates": _TRUST,
    "provenance": _TRUST + [_MP + "test_store.py"],
    "memory_text": _TRUST,
    "providers": [_MP + "test_auto_recall.py", _MP + "test_agent.py"] + _TRUST,
    "fsutil": [_MP + "test_fsutil.py", _MP + "test_fsutil_cuts.py", _MP + "test_store_faults.py",
               _MP + "test_store_items.py", _MP + "test_session.py", _MP + "test_store.py",
               _MP + "test_session_opens.py", _MP + "test_handover_behind.py"],
    "_compat": [_MP + "test_session_lifecycle.py", _MP + "test_chats.py", _MP + "test_inspect.py",
                _MP + "test_session.py", "tests_host/test_cli.py"],
    "profile": [_MP + "test_tools.py", _MP + "test_tools_edges.py", _MP + "test_agent.py",
                _MP + "test_prompt_values.py", _MP + "test_paths.py"],
    "text": [_MP + "test_text.py", _MP + "test_session.py", _MP + "test_store.py", _MP + "test_session_records.py",
             "tests_host/test_text_cpython.py", _MP + "test_prompt_values.py",
             _MP + "test_store_items.py", _MP + "test_store_labels.py", _MP + "test_inspect.py",
             "tests_host/test_cli_escapes.py"],
    "jsontail": [_MP + "test_chats.py", "tests_host/test_text_cpython.py", _MP + "test_jsonraw.py"],
    "jsonraw": [_MP + "test_jsonraw.py", _MP + "test_text.py", _MP + "test_session_records.py", "tests_host/test_text_cpython.py",
                _MP + "test_chats.py", _MP + "test_store_items.py", _MP + "test_store_espclaw_files.py"],
    "item": [_MP + "test_store.py", _MP + "test_store_items.py", _MP + "test_store_ranking.py",
             _MP + "test_store_labels.py", _MP + "test_extract.py", _MP + "test_tools_edges.py",
             "tests_host/test_bundle_fields.py", _MP + "test_provenance.py", _MP + "test_undo.py"],
    "chat_tools": [_MP + "test_tools.py", _MP + "test_tools_edges.py", _MP + "test_corpus.py",
                   _MP + "test_search.py", _MP + "test_search_faults.py",
                   "tests_host/test_text_cpython.py"] + _TRUST,
    "wiring": [_MP + "test_search.py", _MP + "test_tools.py", _MP + "test_agent.py"],
    "memory_tools": [_MP + "test_tools.py", _MP + "test_tools_edges.py", _MP + "test_extract.py",
                     _MP + "test_corpus.py"] + _TRUST,
    "extract": [_MP + "test_extract.py", _MP + "test_tools_edges.py", _MP + "test_expiry.py", _MP + "test_jsonraw.py"],
    "terms": [_MP + "test_terms.py", _MP + "test_recall_rank.py", _MP + "test_search_edges.py"],
    "memory": [_MP + "test_agent.py", "tests_host/test_cli.py", "tests_host/test_pieces.py"],
    "wire": [_MP + "test_stream.py", _MP + "test_llm.py", "tests_host/test_llm.py", _MP + "test_agent.py",
             _MP + "test_session_records.py", _MP + "test_jsonraw.py"],
    "chats": ["tests_host/test_text_cpython.py", _MP + "test_chats.py", _MP + "test_search.py", _MP + "test_session_lifecycle.py", _MP + "test_lifecycle_powercut.py",
              _MP + "test_incognito.py"],
    "hooks": [_MP + "test_session_lifecycle.py", _MP + "test_agent.py", _MP + "test_lifecycle_powercut.py",
              _MP + "test_incognito.py", _MP + "test_provenance.py"],
    # the LLM clients: test_llm_mp.py runs them under MicroPython with micropython-lib's
    # aiohttp (TLS, sockets, the answer reader); it needs CLAW_MPLIB, and main() refuses to
    # run mutants mapped to it without one rather than let them meet a skipped module
    "llm/": _LLM,
    "llm/certs": _LLM + ["tests_host/test_cabundle.py"],
    "core": _LLM + [_MP + "test_extract.py", "tests_host/test_readme.py", _MP + "test_prompt_values.py",
             "tests_host/test_text_cpython.py"],
    "reply": _LLM + [_MP + "test_extract.py", "tests_host/test_readme.py"],
    "": ["tests_host"],  # anything else: the whole suite
}

# Score groups of the bar (storage >= 90 %, tools >= 80 %).
GROUPS = (("storage", ("session/", "store/", "fsutil", "item", "text")),
          ("tools", ("chat_tools", "memory_tools", "extract")))

_LIVE = set()  # running pytest processes, killed when the tool is interrupted
_NEEDS_GIT = ("tests_host/test_references.py", "tests_host/test_readme_walk.py")
_SKIP = ("__pycache__", ".git", ".venv", ".pytest_cache", ".ruff_cache", "*.egg-info", "*.pyc")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


class Mutant:
    def __init__(self, n, module, before, after, desc, equivalent=None):
        self.n = n
        self.module = module
        self.before = before
        self.after = after
        self.desc = desc
        self.equivalent = equivalent
        self.id = "%s:%d" % (module, n)
        self.path = "claw_memory/%s.py" % module
        self.status = None  # killed | survived | timeout | stale | invalid | equivalent
        self.by = ""  # what killed it, or why it was not run
        self.stage = 0
        self.secs = 0.0


def load_mutants():
    from mutants import MUTANTS

    seen = {}
    out = []
    for entry in MUTANTS:
        if len(entry) == 5:
            module, before, after, desc, equiv = entry
            if not equiv.startswith("equivalent: "):
                sys.exit("mutant %s %r: the fifth field must start with 'equivalent: '" % (module, desc))
            equiv = equiv[len("equivalent: "):]
        else:
            module, before, after, desc = entry
            equiv = None
        seen[module] = seen.get(module, 0) + 1
        out.append(Mutant(seen[module], module, before, after, desc, equiv))
    return out


def tests_for(module):
    best = None
    for key in TESTS:
        if module == key or (key.endswith("/") and module.startswith(key)) or key == "":
            if best is None or len(key) > len(best):
                best = key
    return TESTS[best]


def group_of(module):
    for name, keys in GROUPS:
        for k in keys:
            if module == k or (k.endswith("/") and module.startswith(k)):
                return name
    return "other"


def check(m):
    """Mark a mutant stale/invalid when it cannot be applied; return the mutated source."""
    path = os.path.join(ROOT, m.path)
    if not os.path.exists(path):
        m.status, m.by = "stale", "no file %s" % m.path
        return None
    with open(path, encoding="utf-8") as f:
        src = f.read()
    count = src.count(m.before)
    if count != 1:
        m.status, m.by = "stale", "`before` found %d times in %s" % (count, m.path)
        return None
    if m.before == m.after:
        m.status, m.by = "invalid", "before == after"
        return None
    new = src.replace(m.before, m.after)
    try:
        compile(new, m.path, "exec")
    except SyntaxError as e:
        m.status, m.by = "invalid", "mutated source does not compile: %s" % e
        return None
    return new


# -- scratch copies and test runs ---------------------------------------------------------


def python_bin():
    for cand in (os.path.join(ROOT, ".venv", "bin", "python"),
                 os.path.join(ROOT, ".venv", "Scripts", "python.exe")):
        if os.path.exists(cand):
            return cand
    return sys.executable


def make_scratch(base, ignore):
    dst = tempfile.mkdtemp(prefix="mutate-", dir=base)
    shutil.copytree(ROOT, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_SKIP))
    for pat in ignore:
        for p in glob.glob(os.path.join(dst, pat)):
            os.remove(p)
    return dst


def run_tests(scratch, tests, timeout):
    """(passed, seconds, what failed) of pytest on `tests` inside `scratch`."""
    tests = [t for t in tests if os.path.exists(os.path.join(scratch, t.split("::")[0]))]
    if not tests:
        return True, 0.0, ""
    env = dict(os.environ)
    env["PYTHONPATH"] = scratch  # before the editable install that points at the working tree
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a stale .pyc must never stand in for a mutant
    env["CLAW_FAST_FIRST"] = "1"  # (-x: a quick test that fails ends the run early)
    env.pop("CLAW_MP_TESTS", None)
    # (the scratch copy has no .git: the tests that ask git for the repository's files are
    # left out; they check documents and the checkout, which no mutant of the package changes)
    cmd = [python_bin(), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=-ra"]
    cmd += ["--ignore=" + t for t in _NEEDS_GIT] + tests
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=scratch, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    _LIVE.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, time.monotonic() - t0, "timeout after %.0f s" % timeout
    finally:
        _LIVE.discard(proc)
    secs = time.monotonic() - t0
    text = out.decode("utf-8", "replace")
    if proc.returncode == 0:
        return True, secs, ""
    found = _FAILED.findall(text)
    if found:
        return False, secs, found[0]
    tail = [ln for ln in text.strip().splitlines() if ln.strip()][-1:] or ["?"]
    return False, secs, "pytest exit %d: %s" % (proc.returncode, tail[0][:100])


def kill_live():
    """Kill the running test processes (the tool was interrupted)."""
    for proc in list(_LIVE):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


class Pool:
    """Scratch copies, one per worker, each handed to one mutant at a time."""

    def __init__(self, jobs, base, ignore):
        self.free = [make_scratch(base, ignore) for _ in range(jobs)]
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            return self.free.pop()

    def give(self, d):
        with self.lock:
            self.free.append(d)


def run_mutant(pool, m, src, tests, timeout, stage):
    d = pool.take()
    path = os.path.join(d, m.path)
    with open(path, encoding="utf-8") as f:
        orig = f.read()
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(src)
        passed, secs, why = run_tests(d, tests, timeout)
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(orig)
        pool.give(d)
    m.secs += secs
    m.stage = stage
    if passed:
        m.status, m.by = "survived", ""
    elif passed is None:
        m.status, m.by = "timeout", why
    else:
        m.status, m.by = "killed", why
    return m


def baseline(pool, tests, jobs):
    """Seconds each test set takes unmutated; exits when one fails (the tool would lie)."""
    times = {}
    sets = sorted(set(tuple(t) for t in tests))

    def one(ts):
        d = pool.take()
        try:
            return ts, run_tests(d, list(ts), 3600)
        finally:
            pool.give(d)

    with ThreadPoolExecutor(jobs) as ex:
        for ts, (passed, secs, why) in ex.map(one, sets):
            if not passed:
                sys.exit("baseline: the unmutated tests fail (%s): %s" % (why, " ".join(ts)))
            times[ts] = secs
    return times


# -- report -------------------------------------------------------------------------------


def table(mutants, elapsed):
    lines = []
    w = max([len(m.id) for m in mutants] + [6])
    lines.append("%-*s  %-10s  %-5s  %s" % (w, "mutant", "status", "stage", "description / killed by"))
    for m in mutants:
        stage = str(m.stage) if m.stage else "-"
        lines.append("%-*s  %-10s  %-5s  %s" % (w, m.id, m.status, stage, m.desc))
        if m.by:
            lines.append("%-*s  %-10s  %-5s    %s" % (w, "", "", "", m.by))
    lines.append("")
    lines.append(score_table(mutants))
    lines.append("run time: %dm%02ds" % (elapsed // 60, elapsed % 60))
    return "\n".join(lines)


def _score(ms):
    counted = [m for m in ms if m.status in ("killed", "survived", "timeout")]
    killed = [m for m in counted if m.status != "survived"]
    pct = 100.0 * len(killed) / len(counted) if counted else 0.0
    return len(killed), len(counted), pct


def score_table(mutants):
    mods = []
    for m in mutants:
        if m.module not in mods:
            mods.append(m.module)
    mods.sort()
    rows = ["%-22s %6s %6s %6s %5s %5s  %s" % ("module", "killed", "count", "score", "equiv", "stale",
                                               "survivors")]
    for mod in mods:
        ms = [m for m in mutants if m.module == mod]
        k, c, pct = _score(ms)
        rows.append("%-22s %6d %6d %5.0f%% %5d %5d  %s" % (
            mod, k, c, pct, sum(m.status == "equivalent" for m in ms),
            sum(m.status in ("stale", "invalid") for m in ms),
            " ".join(str(m.n) for m in ms if m.status == "survived")))
    for name, _ in GROUPS + (("other", ()),):
        ms = [m for m in mutants if group_of(m.module) == name]
        if ms:
            k, c, pct = _score(ms)
            rows.append("%-22s %6d %6d %5.0f%%" % ("[%s]" % name, k, c, pct))
    k, c, pct = _score(mutants)
    rows.append("%-22s %6d %6d %5.0f%%" % ("[all]", k, c, pct))
    return "\n".join(rows)


# -- main ---------------------------------------------------------------------------------


def select(mutants, args):
    out = mutants
    if args.module:
        out = [m for m in out if any(m.module == a or m.module.startswith(a.rstrip("/") + "/")
                                     for a in args.module)]
    if args.only:
        want = set(args.only)
        out = [m for m in out if m.id in want]
        missing = want - set(m.id for m in out)
        if missing:
            sys.exit("no such mutant: %s" % ", ".join(sorted(missing)))
    if args.sample and args.sample < len(out):
        rnd = random.Random(args.seed)
        picked = set(id(m) for m in rnd.sample(out, args.sample))
        out = [m for m in out if id(m) in picked]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--module", nargs="+", help="only these modules or packages (e.g. session/repair store)")
    ap.add_argument("--only", nargs="+", metavar="ID", help="only these mutants (module:n)")
    ap.add_argument("--sample", type=int, help="a random sample of N mutants")
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample")
    ap.add_argument("--tests", nargs="+", metavar="NODE",
                    help="run these pytest node ids instead of the mapped tests (no stage 2): "
                         "does this test kill that mutant?")
    ap.add_argument("--jobs", type=int, default=2, help="parallel workers (default 2)")
    ap.add_argument("--ignore", action="append", default=[], metavar="GLOB",
                    help="delete these files (relative glob) from the scratch copies")
    ap.add_argument("--no-full", action="store_true", help="skip stage 2 (whole suite for survivors)")
    ap.add_argument("--run-equivalent", action="store_true", help="run argued-equivalent mutants too")
    ap.add_argument("--check", action="store_true", help="only check that the mutants apply")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--report", metavar="FILE", help="also write the table to FILE")
    args = ap.parse_args(argv)
    t_start = time.monotonic()

    mutants = select(load_mutants(), args)
    sources = {}
    for m in mutants:
        src = check(m)
        if src is not None:
            sources[m.id] = src
            if m.equivalent and not args.run_equivalent:
                m.status, m.by = "equivalent", m.equivalent
    if args.list:
        for m in mutants:
            print("%-22s %-10s %s" % (m.id, m.status or "", m.desc))
        return 0
    bad = [m for m in mutants if m.status in ("stale", "invalid")]
    for m in bad:
        print("%s %s: %s (%s)" % (m.status.upper(), m.id, m.by, m.desc), file=sys.stderr)
    if args.check:
        print("%d mutants, %d apply, %d stale or invalid" % (len(mutants), len(mutants) - len(bad), len(bad)))
        return 1 if bad else 0
    todo = [m for m in mutants if m.status is None]
    tests_of = (lambda m: args.tests) if args.tests else (lambda m: tests_for(m.module))
    lib = os.environ.get("CLAW_MPLIB", "")
    if not os.path.isdir(os.path.join(lib, "python-ecosys", "aiohttp", "aiohttp")) and any(
            _LLM_MP in tests_of(m) for m in todo):
        sys.exit("mutate: %s is mapped to these mutants and needs CLAW_MPLIB, a micropython-lib "
                 "tree with python-ecosys/aiohttp (see README, \"Tests\"); without it the LLM "
                 "clients' TLS and socket paths meet no test" % _LLM_MP)
    print("mutate: %d mutants selected, %d to run, %d equivalent, %d stale/invalid" % (
        len(mutants), len(todo), sum(m.status == "equivalent" for m in mutants), len(bad)), flush=True)

    base = tempfile.mkdtemp(prefix="claw-mutate-")
    try:
        pool = Pool(max(args.jobs, 1), base, args.ignore)
        jobs = max(args.jobs, 1)
        times = baseline(pool, [tests_of(m) for m in todo], jobs) if todo else {}
        done = [0]

        def stage(ms, tests_of, limit, n):
            def one(m):
                run_mutant(pool, m, sources[m.id], tests_of(m), limit(m), n)
                done[0] += 1
                print("  [%d/%d] stage %d %-22s %-9s %5.1fs %s" % (
                    done[0], len(ms), n, m.id, m.status, m.secs, m.by), flush=True)

            done[0] = 0
            ex = ThreadPoolExecutor(jobs)
            try:
                list(ex.map(one, ms))
            except BaseException:
                kill_live()
                ex.shutdown(wait=False, cancel_futures=True)
                raise
            ex.shutdown()

        stage(todo, tests_of, lambda m: 3 * times[tuple(tests_of(m))] + 60, 1)
        survivors = [m for m in todo if m.status == "survived" and tests_of(m) != ["tests_host"]]
        if survivors and not args.no_full and not args.tests:
            print("mutate: %d survivors; the whole suite, unmutated first" % len(survivors), flush=True)
            full = baseline(pool, [["tests_host"]], 1)[("tests_host",)]
            stage(survivors, lambda m: ["tests_host"], lambda m: 2 * full + 120, 2)
    finally:
        kill_live()
        shutil.rmtree(base, ignore_errors=True)
    out = table(mutants, time.monotonic() - t_start)
    print()
    print(out)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.write(out + "\n")
    if bad:
        print("mutate: %d stale or invalid mutant(s): refresh them in tools/mutants.py" % len(bad),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
