# claw_memory: persistent memory for an on-device LLM agent (ESP32-S3, MicroPython).
# MIT license
"""Session history, long-term memories and profile documents on the board's flash.

    import claw_memory
    mem = claw_memory.open("/flash")
"""

__version__ = "0.1.0"
