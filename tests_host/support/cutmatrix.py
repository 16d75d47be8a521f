# Power-cut matrix runner shared by the tests and tools/powercut.py.
# MIT license
#
# A workload is a function(acked) that performs numbered steps and appends to `acked` what
# each step made durable once the call returned. `check(acked)` runs after the reboot on the
# surviving bytes and returns the number of acknowledged items lost (raising on any other
# broken invariant). The matrix runs the workload once without a cut to count its program/
# erase operations, then once per cut point.

from flashsim import mount

CONFIGS = {
    # name: (filesystem, block size, erase before program)
    "lfs2-4096": ("lfs2", 4096, True),
    "fat-512": ("fat", 512, True),
    "fat-4096": ("fat", 4096, True),
    "fat-sd-512": ("fat", 512, False),
    "fat-sd-4096": ("fat", 4096, False),
}


def _blocks(bs, kib):
    return kib * 1024 // bs


def run(config, workload, check, torn=False, every=1, kib=1024, path="/flash", setup=None):
    """Returns {"config","torn","ops","cuts","recovered","lost","failures":[...]}."""
    kind, bs, erase = CONFIGS[config]
    dev = mount(kind, path, blocks=_blocks(bs, kib), block_size=bs, erase_on_write=erase)
    if setup:
        setup()
    base = dev.ops
    workload([])
    total = dev.ops - base
    dev.unmount()
    res = {"config": config, "torn": torn, "ops": total, "cuts": 0, "recovered": 0, "lost": 0,
           "failures": []}
    n = 0
    while n < total:
        dev = mount(kind, path, blocks=_blocks(bs, kib), block_size=bs, erase_on_write=erase)
        if setup:
            setup()
        acked = []
        dev.cut_power(after=n, torn=torn)
        try:
            workload(acked)
        except Exception:
            pass
        if not dev.dead:
            dev.unmount()
            break
        res["cuts"] += 1
        try:
            dev = dev.reboot()
        except OSError as e:
            res["failures"].append((n, "filesystem does not mount: %r" % (e,)))
            res["lost"] += len(acked)
            n += every
            continue
        try:
            lost = check(acked)
        except Exception as e:  # an invariant broke: record it with the cut point
            res["failures"].append((n, "%s: %s" % (type(e).__name__, e)))
            lost = 0
        else:
            res["recovered"] += 1
        res["lost"] += lost
        if lost:
            res["failures"].append((n, "%d acknowledged item(s) lost" % lost))
        dev.unmount()
        n += every
    return res


def line(res):
    return "%-12s torn=%-5s ops=%4d cuts=%4d recovered=%4d acked-lost=%3d failures=%d" % (
        res["config"], res["torn"], res["ops"], res["cuts"], res["recovered"], res["lost"],
        len(res["failures"]))
