# claw_memory: persistent memory for an on-device LLM agent (ESP32-S3, MicroPython).
# MIT license
"""Session history, long-term memories and profile documents on the board's flash.

    import claw_memory
    mem = claw_memory.open("/flash")
"""

__version__ = "0.1.0"


def open(root=None, mode="full", **kw):  # noqa: A001 -- the package's public verb
    """Open the memory of a data root; see claw_memory.memory.Memory for the options."""
    from .memory import Memory

    return Memory(root, mode, **kw)
