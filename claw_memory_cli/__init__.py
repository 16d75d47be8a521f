"""Host tools for claw_memory (CPython): inspect, verify, repair, export, deploy, demo."""
