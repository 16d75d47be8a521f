# claw_memory: background extraction of lasting user facts from each user message.
# MIT license
#
# One asyncio task works through a bounded queue (depth 4; when it is full the request goes
# on without extraction). Each job is one LLM call; its answer is applied when the request's
# stage note claims it, which waits a bounded time (ESP-Claw waits forever). Answers nobody
# claims within 60 s are dropped. An LLM error or a garbage answer is counted and logged,
# never stored.

import asyncio

from . import dates, jsonraw, text
from . import item as itm
from ._compat import const, exc_text, ticks_diff, ticks_ms
from .core import note

DEPTH = const(4)
MAX_ITEMS = const(3)
_SWEEP_MS = const(60000)
_FORGOTTEN_MAX = const(16)

SYSTEM_PROMPT = """\
You read one message a user sent to an assistant running on a small device, and pick out \
facts about the user that are worth remembering for a long time.
Answer with JSON only, in this form:
{"intent":"none|forget|replace","memories":[{"content":"...","tags":["..."],"keywords":["..."]}]}
intent:
- "forget" when the user wants something no longer remembered, deleted or erased; then memories is empty.
- "replace" when the user corrects or changes a lasting fact they gave before; give only the corrected fact.
- "none" in every other case, including when the user asks to keep remembering something.
What to extract:
- Only lasting facts about the user, or lasting rules they set, that this message itself states.
- At most 3 memories, usually 0 or 1. Each is one short fact in the user's language, written as a statement, not a quote.
- tags: 1 or 2 short labels to find the fact again, concrete (city, food, job, pet, language), never generic (profile, preference, info, memory, fact, user data).
- keywords: at most 3 exact words taken from the fact or its tags; no synonyms, nothing invented.
- Reuse a label from the existing list when it fits.
What not to extract (answer {"intent":"none","memories":[]}):
- Requests to change the assistant's name, persona, role, tone or behaviour.
- Questions, requests, tasks, small talk, anything short-lived.
- Facts stated only by the assistant, by earlier history, or by the existing labels.
When nothing lasting is stated, answer {"intent":"none","memories":[]}.
"""

# Added to SYSTEM_PROMPT when the board's clock is set (the message then starts with the date).
DATED_PROMPT = """Dates: today's date comes before the message. Write a date in a fact as an absolute date (2026-12-24), never as "today", "tomorrow" or "next Friday".
A fact that is plainly temporary (a trip this week, a cold, a guest until Sunday) also gets "expires": the date it stops being true ("2026-12-24") or a duration ("7d", "12h"); a lasting fact gets none.
"""


def parse_document(answer):
    """The JSON value in an LLM answer: the whole text, else from the first `{` to the last
    `}`, else from the first `[` to the last `]`; None when none of them parses."""
    if not isinstance(answer, str):
        return None
    for a, b in (("", ""), ("{", "}"), ("[", "]")):
        if a:
            i = answer.find(a)
            j = answer.rfind(b)
            if i < 0 or j <= i:
                continue
            cand = answer[i : j + 1]
        else:
            cand = answer.strip()
        value = jsonraw.foreign(cand)
        if value is not None:
            return value
    return None


def _labels_field(entry, *names):
    for n in names:
        v = entry.get(n)
        if isinstance(v, str) and v.strip():
            return v
        if isinstance(v, list):
            got = [x for x in v if isinstance(x, str) and x.strip()][:3]
            if got:
                return ",".join(got)
    return ""


class Job:
    def __init__(self, request, seq):
        self.request_id = request.id
        self.session_id = request.session_id
        self.text = request.text
        self.seq = seq
        self.answer = None
        self.error = None
        self.done = False
        self.done_at = 0
        self.event = asyncio.Event()


class Extraction:
    """The extraction worker of one memory."""

    def __init__(self, store, llm, log=None, depth=DEPTH, sweep_ms=_SWEEP_MS, zone=None):
        self.store = store
        self.llm = llm
        self.zone = zone  # the user's time zone (dates.offset_of), for today's date
        self.depth = depth
        self.sweep_ms = sweep_ms
        self._log = log
        self._jobs = []
        self._queue = []
        self._wake = None
        self._task = None
        self._seq = 0
        self._forgotten = []  # (seq, key, normalised content) of items forgotten by hand
        self.stats = {"started": 0, "queue_full": 0, "errors": 0, "garbage": 0,
                      "timeouts": 0, "stored": 0, "dropped": 0, "discarded": 0}

    def _note(self, msg):
        note(self._log, msg)

    def _sweep(self):
        now = ticks_ms()
        keep = []
        for job in self._jobs:
            if job.done and ticks_diff(now, job.done_at) > self.sweep_ms:
                self.stats["dropped"] += 1
            else:
                keep.append(job)
        self._jobs = keep

    def start(self, request):
        """Queue the request's user message; False when it was not queued."""
        if not request.id or not request.session_id or not request.text:
            return False
        self._sweep()
        for job in self._jobs:
            if job.request_id == request.id:
                return True
        if len(self._queue) >= self.depth:
            self.stats["queue_full"] += 1
            self._note("extraction queue full: request %s goes on without it" % request.id)
            return False
        self._seq += 1
        job = Job(request, self._seq)
        self._jobs.append(job)
        self._queue.append(job)
        self.stats["started"] += 1
        if self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.create_task(self._worker())
        self._wake.set()
        return True

    async def _worker(self):
        while True:
            while self._queue:
                try:
                    await self._run(self._queue.pop(0))
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 -- one job's failure (its event is set)
                    self.stats["errors"] += 1  # is its own: the worker goes on with the next
            self._wake.clear()
            await self._wake.wait()

    async def _run(self, job):
        try:
            prompt = "Existing summary labels:\n%s\nCurrent user message:\n%s\n" % (
                self.store.catalog_text(), job.text)
            system = SYSTEM_PROMPT
            now = self.store.clock()
            if dates.clock_set(now):  # (without a set clock: the prompt as it always was)
                system += DATED_PROMPT
                prompt = "Today: %s\n%s" % (dates.today(now, dates.offset_of(self.zone)), prompt)
            reply = await self.llm.chat(system, [{"role": "user", "content": prompt}], None)
            if reply.tool_calls:
                raise ValueError("the extraction answer called tools")
            job.answer = reply.text
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 -- counted and logged, never stored
            self.stats["errors"] += 1
            job.error = str(e)
            self._note("extraction for request %s failed: %s" % (job.request_id, exc_text(e)))
        finally:  # (also when the note fails: the request waiting for it goes on)
            job.done = True
            job.done_at = ticks_ms()
            job.event.set()

    async def take(self, request, wait_s):
        """The request's finished job (detached), or None: no job, an error, or not finished
        within `wait_s` seconds (then its answer is dropped whenever it comes)."""
        job = None
        for j in self._jobs:
            if j.request_id == request.id:
                job = j
                break
        if job is None:
            return None
        self._jobs.remove(job)
        if not job.done:
            try:
                await asyncio.wait_for(job.event.wait(), wait_s)
            except asyncio.TimeoutError:
                self.stats["timeouts"] += 1
                self._note("extraction for request %s not ready after %s s: dropped" % (request.id, wait_s))
                return None
        return job if job.answer is not None else None

    def forgotten(self, it):
        """An item was forgotten by hand: answers of jobs started before must not store it
        again."""
        self._forgotten.append((self._seq, itm.key(it["content"]), itm.norm(it["content"])))
        if len(self._forgotten) > _FORGOTTEN_MAX:
            self._forgotten.pop(0)

    def _was_forgotten(self, job, content):
        k = itm.key(content)
        n = itm.norm(content)
        for seq, fk, fn in self._forgotten:
            if job.seq <= seq and (fk == k or itm.semantic_match(fn, n)):
                return True
        return False

    def apply(self, job, by=None):
        """Store what the job's answer extracted; returns the labels of what was stored.
        `forget` stores nothing; `replace` also forgets the items the new fact contradicts.
        `by`: the provenance of the request (hooks.MemoryHooks.by), the items' origin."""
        doc = parse_document(job.answer)
        if doc is None:
            if text.trim(job.answer or ""):
                self.stats["garbage"] += 1
                # a stand-in LLM that answers every call in prose meets this first: say what
                # the call wants (docs/CONTRACT.md)
                self._note("extraction answer is not JSON: %r (it must be "
                           "{\"intent\":\"none\",\"memories\":[...]}: docs/CONTRACT.md)"
                           % (job.answer or "")[:80])
            return []
        intent = doc.get("intent") if isinstance(doc, dict) else None
        if intent == "forget":
            return []
        mems = doc if isinstance(doc, list) else doc.get("memories") if isinstance(doc, dict) else None
        if not isinstance(mems, list):
            self.stats["garbage"] += 1
            self._note("extraction answer has no memories list")
            return []
        labels = []
        stored = []  # ids of this result's facts: they do not contradict each other
        # The whole result is one append (one batch): a power cut stores all of its facts
        # and the forgetting of what they replace, or none of it.
        now = self.store.clock()
        with self.store.batch(by) as b:
            for entry in mems[:MAX_ITEMS]:
                if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
                    continue
                content = entry["content"]
                if self._was_forgotten(job, content):
                    self._note("extraction skipped a fact forgotten meanwhile")
                    continue
                tags = _labels_field(entry, "tags", "summary_labels")
                keywords = _labels_field(entry, "keywords") or tags
                source = entry.get("source")
                try:  # (a duration while the clock is not set: 0, none)
                    exp = dates.expiry(entry.get("expires"), now, dates.offset_of(self.zone))
                except ValueError as e:  # the fact stands; only its expiry goes
                    self._note("extraction: expiry ignored: %s" % e)
                    exp = None
                try:  # a rejected candidate is refused before it changes anything
                    it, changed = b.store(content, tags, keywords,
                                          source if isinstance(source, str) and source else "auto_llm",
                                          expires_at=exp or 0)
                except ValueError as e:
                    self._note("extraction candidate skipped: %s" % e)
                    continue
                if not changed:
                    continue
                stored.append(it["id"])
                if intent == "replace":
                    for mid in b.ids_where(lambda x: x["id"] not in stored and itm.conflicts(x, it)):
                        b.forget(mid)
                text.lines_merge(labels, it["summary_labels"])
        self.stats["stored"] += len(stored)
        return labels

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None
