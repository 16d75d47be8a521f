# claw_memory.wiring: what an agent loop is wired with (the facade's providers and tools),
# and the facade's less used calls: imported when first asked for, so that an open memory
# holds none of it (installed as .mpy, a module's bytecode lives in the heap).
# MIT license


def providers(mem):
    """Memory.providers()."""
    from . import dates, providers, skills

    if mem.store is not None:  # FULL mode
        out = [
            providers.profile(mem.profile, mem.log),
            providers.long_term(mem.store, mem.log, mem.auto_recall, dates.offset_of(mem.timezone)),
            providers.history(mem.sessions, mem.backend, mem.log),
            providers.skills((skills.MEMORY_OPS, skills.PROFILE_MEMORY_OPS,
                              skills.HISTORY_SEARCH + skills.SEARCH_OR_RECALL), mem.log),
        ]
    else:
        out = [
            providers.profile(mem.profile, mem.log),
            providers.long_term_lite(mem.md_path(), mem._refresh_md, mem.log),
            providers.history(mem.sessions, mem.backend, mem.log),
            providers.skills((skills.PROFILE_MEMORY_OPS, skills.HISTORY_SEARCH), mem.log),
        ]
    if mem.date:
        out.append(providers.date(mem.clock, mem.timezone, mem.profile, mem.log))
    return out


def tools(mem, session_command):
    """Memory.tools()."""
    out = []
    if mem.store is not None:
        if mem._memory_tools is None:
            from .memory_tools import MemoryTools

            mem._memory_tools = MemoryTools(mem.store, mem._memory_hooks(), mem.extraction,
                                            mem.log, mem.timezone)
        out += mem._memory_tools.tools()
    from .chat_tools import ProfileTools, SearchTool, SessionTool

    if mem._profile_tools is None:
        mem._profile_tools = ProfileTools(mem.profile, mem.log, mem.sessions.is_incognito)
    out += mem._profile_tools.tools()
    out.append(SearchTool(mem.sessions, mem.chat_sessions, mem.log).tool())
    if session_command:
        out.append(SessionTool(mem.chats).tool())
    return out


def search(mem, query, limit, chat, session, agent, skipped):
    """Memory.search()."""
    if session is not None and chat is not None:
        raise ValueError("give session or chat, not both")
    if session is not None:
        if not isinstance(session, str):
            raise ValueError("session must be a session id (text)")
        ids = (session,)
    elif chat is not None:
        ids = chat_sessions(mem, chat, agent)
    else:
        ids = None
    return mem.sessions.search(query, limit, ids, skipped)


def chat_sessions(mem, chat, agent=0):
    """Memory.chat_sessions()."""
    if not isinstance(chat, (tuple, list)) or len(chat) != 2:
        raise ValueError("chat must be (channel, chat_id)")
    from .chats import chat_key

    state = mem.chats.aliases(chat[0], chat[1], agent)
    if state is None:
        return ()
    key = chat_key(chat[0], chat[1], agent)
    # (in the order the map made them, the current session last: the newer on a search's tie)
    return tuple(key + ":" + a for a in state[1] if a != state[0]) + (key + ":" + state[0],)


def memory_command(mem, channel, chat_id, command, agent=0):
    """Memory.memory_command()."""
    if mem.store is None:
        return "Long-term memory is not used in LITE mode."
    if not channel or not chat_id:
        return "Memory command failed: missing chat context."
    from .memory_text import command as run

    tools(mem, False)  # the memory tools, made once
    try:
        return run(mem._memory_tools, mem.chats.session_id(channel, chat_id, agent), command)
    except Exception as e:  # noqa: BLE001 -- the user gets a reply, the log the cause
        from .core import note

        note(mem.log, "/memory %s failed: %s" % (command, e))
        return "Memory command failed: %s" % e
