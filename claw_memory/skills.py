# claw_memory: the skill texts that teach the agent to use its memory.
# MIT license
#
# ESP-Claw ships these as SKILL.md files; here they are strings, so that they freeze into
# firmware with the code and reach the agent through the "Memory Skills" provider.

MEMORY_OPS = """\
Long-term memory tools: memory_store, memory_recall, memory_list, memory_update, memory_forget.

When to write:
- Call memory_store only when the user asks you to remember or save something.
- Store one clear fact in the user's own language, rewritten as a short statement
  (not a quote of the message), with 1-2 short tags and at most 3 keywords that appear
  in the fact.
- Prefer stable topic tags (schedule, diet, commute, family, work) over one-off words.
- Do not store casual self-introductions: they are picked up automatically.
- Never offer to save things, and never describe what you stored step by step.

When to read:
- The system prompt lists only the labels of stored memories. To know what they say,
  call memory_recall with labels copied exactly from that list. Never invent labels
  and never pass questions as labels.
- When the user asks what you know about them or whether something is still true,
  recall first; do not answer from the conversation alone.
- Use memory_list to see every memory with its memory_id.

When to change or delete:
- Find the memory_id with memory_recall or memory_list, then call memory_update or
  memory_forget with exactly that id.
- Only say a memory was changed or forgotten after the tool reported success.
- Never read or edit the memory files directly.
"""

PROFILE_MEMORY_OPS = """\
Profile documents: soul (who you are and what you value), identity (your name, role,
personality) and user (who the user is and their standing preferences). They are part
of every system prompt.

- Read one with profile_read, then replace it with profile_update (the whole new text).
- Change soul or identity when the user asks you to take on a different persona, name,
  role, tone or style; speak in the new persona right away.
- Change user for durable facts about the user's profile and standing guidance.
- Ordinary "remember that ..." requests belong in long-term memory (memory_store), not
  in the profile documents.
- Keep the documents short; rewrite rather than append endlessly.
"""

HISTORY_SEARCH = """\
Conversation search: memory_search finds what was said in this chat before: in earlier
sessions of this chat and in old turns that were archived to keep the history short.

- Call memory_search when the user refers to something said before that is not in the
  conversation you can see ("what did I tell you last month about...", "the recipe
  from our other session"). Give it a few distinctive words (names, places, numbers),
  not a whole question.
- It returns the matching messages with their session and role; quote or summarize
  them, and say so when nothing matched.
"""

# FULL mode adds this to HISTORY_SEARCH: the line between the two ways of remembering.
SEARCH_OR_RECALL = """\
- Facts stored about the user are long-term memories: read those with memory_recall;
  memory_search is for what was said, not for what was stored.
"""

SKILLS = {"memory_ops": MEMORY_OPS, "profile_memory_ops": PROFILE_MEMORY_OPS,
          "history_search": HISTORY_SEARCH}
