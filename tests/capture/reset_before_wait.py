"""The reset-before-the-second-wait bug of reset_before_wait.c, from Python through
ctypes: `python3 reset_before_wait.py LIBASCENDCL [fixed]`."""

import ctypes
import sys

acl = ctypes.CDLL(sys.argv[1])
fixed = len(sys.argv) > 2 and sys.argv[2] == "fixed"
ACL_EVENT_SYNC = 1


def check(ret):
    if ret != 0:
        raise SystemExit(f"ACL error {ret}")


def new(create, *args):
    handle = ctypes.c_void_p()
    check(create(ctypes.byref(handle), *args))
    return handle


check(acl.aclInit(None))
check(acl.aclrtSetDevice(0))
producer, first, second = (new(acl.aclrtCreateStream) for _ in range(3))
ready = new(acl.aclrtCreateEventWithFlag, ctypes.c_uint32(ACL_EVENT_SYNC))
check(acl.aclrtRecordEvent(ready, producer))
check(acl.aclrtStreamWaitEvent(first, ready))
if not fixed:
    check(acl.aclrtResetEvent(ready, first))
check(acl.aclrtStreamWaitEvent(second, ready))
check(acl.aclrtSynchronizeStream(first))
check(acl.aclrtSynchronizeStream(second))
if fixed:
    check(acl.aclrtResetEvent(ready, producer))
check(acl.aclrtDestroyEvent(ready))
for stream in (producer, first, second):
    check(acl.aclrtDestroyStream(stream))
check(acl.aclrtResetDevice(0))
check(acl.aclFinalize())
