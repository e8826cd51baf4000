/* A stand-in for libascendcl.so: every call succeeds and returns a new handle. */
#include "fake_acl.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static _Atomic uintptr_t next_handle = 0x10000;

static void *new_handle(void) {
    return (void *)atomic_fetch_add(&next_handle, 0x100);
}

aclError aclInit(const char *configPath) { return 0; }
aclError aclFinalize(void) { return 0; }
aclError aclrtSetDevice(int32_t deviceId) { return 0; }
aclError aclrtResetDevice(int32_t deviceId) { return 0; }
aclError aclrtCreateStream(aclrtStream *stream) { *stream = new_handle(); return 0; }
/* The failure the tests use to see that return values and errno pass through. */
#define ACL_ERROR_INVALID_PARAM 100000
aclError aclrtDestroyStream(aclrtStream stream) {
    if (!stream) {
        errno = EINVAL;
        return ACL_ERROR_INVALID_PARAM;
    }
    return 0;
}
aclError aclrtSynchronizeStream(aclrtStream stream) { return 0; }
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) { *event = new_handle(); return 0; }
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) { return 0; }
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) { return 0; }
aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) { return 0; }
aclError aclrtDestroyEvent(aclrtEvent event) { return 0; }
aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag) { *notify = new_handle(); return 0; }
aclError aclrtDestroyNotify(aclrtNotify notify) { return 0; }
aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream) { return 0; }
aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout) { return 0; }
aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len, uint64_t flags) {
    snprintf(key, len, "notify-%d-%p", (int)getpid(), notify);
    return 0;
}
aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key, uint64_t flags) {
    *notify = new_handle();
    return 0;
}
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    *devPtr = (void *)(atomic_fetch_add(&next_handle, 0x100) << 12);
    return 0;
}
aclError aclrtFree(void *devPtr) { return 0; }
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
    return 0;
}
