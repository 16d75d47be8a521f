# Smoke run under the unix port: simulated flash, one durable append and an atomic replace
# through the package, a reboot, and the data read back.
from flashsim import mount

from claw_memory import fsutil, paths

dev = mount("lfs2", "/flash", blocks=64)
lay = paths.Layout().ensure()
log = paths.join(lay.sessions, "smoke.log")
fsutil.append(log, b"hello from claw_memory\n")
fsutil.replace(paths.join(lay.memory, "note.txt"), b"written atomically\n")
print("data root:", lay.root, "programs:", dev.progs, "erases:", dev.erases)
dev = dev.reboot()
with open(log, "rb") as f:
    print("after reboot:", f.read().decode().strip())
with open(paths.join(lay.memory, "note.txt"), "rb") as f:
    print("after reboot:", f.read().decode().strip())
