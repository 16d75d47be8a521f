# LITE: profile documents, MEMORY.md as the user's document, and session history; what
# `claw_memory.open(mode="lite")` imports, and nothing else.
# No metadata(): a plain include() shares the including manifest's (manifestfile.py
# allows one per level); the umbrella manifest.py has it.
package(
    "claw_memory",
    files=(
        "__init__.py",
        "_compat.py",
        "chats.py",
        "core.py",
        "fsutil.py",
        "hooks.py",
        "inspect.py",
        "lite_md.py",
        "memory.py",
        "messages.py",
        "paths.py",
        "profile.py",
        "providers.py",
        "skills.py",
        "text.py",
        "tools.py",
        "wire.py",
        "session/__init__.py",
        "session/compact.py",
        "session/flat.py",
        "session/format.py",
        "session/repair.py",
        "session/replay.py",
        "session/sessions.py",
        "session/state.py",
        "session/stream.py",
        "session/window.py",
        "session/write.py",
    ),
    base_path="..",
)
