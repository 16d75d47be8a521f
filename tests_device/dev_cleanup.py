# On the board: remove the device test's data root.
import os

from devtest_config import ROOT


def rm(path):
    try:
        mode = os.stat(path)[0]
    except OSError:
        return
    if mode & 0x4000:
        for name in os.listdir(path):
            rm(path + "/" + name)
        os.rmdir(path)
    else:
        os.remove(path)


rm(ROOT)
print("DEVTEST PASS cleanup")
