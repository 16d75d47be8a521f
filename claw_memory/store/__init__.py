# claw_memory.store: the long-term memory store (ESP-Claw's structured memory, byte-compatible).
# MIT license
#
# Files under memory/: `memory_records.jsonl` (the journal: one line per change, the last
# line of an id wins), `memory_index.json` (v3: label catalog with ref counts, keyword index;
# derived), `memory_digest.log` (tab-separated operations; recall counts live here until
# compaction) and `MEMORY.md` (derived). Reading order: records (the journal), table (what
# RAM holds per item, the eviction rule), catalog (the labels: where they are), index
# (memory_index.json and its keyword index), digest, markdown, read (items back by the
# table), load (what open finds), compact, state (the State: what RAM holds and what keeps it
# in line with the files), batch (store/update/forget: the write path), store (the Store
# class). docs/FORMAT.md has the formats.

from ..paths import MEMORY_MD
from .state import CHANGE_THRESHOLD, DIGEST, INDEX, JOURNAL, RECORDS, SIZE_BOUND
from .store import MAX_ACTIVE, RECALL_LIMIT, Store

__all__ = ("CHANGE_THRESHOLD", "DIGEST", "INDEX", "JOURNAL", "MAX_ACTIVE", "MEMORY_MD",
           "RECALL_LIMIT", "RECORDS", "SIZE_BOUND", "Store")
