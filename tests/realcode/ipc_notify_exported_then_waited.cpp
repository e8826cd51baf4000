// expect: clean
// Expected: no SG502, SG301 or SG503: the notify is exported by key to another process
// (a main of its own, not in this run) that records it; the wait here is satisfied there.
#include <cstdio>
#include "acl/acl.h"
#define CHECK(call) do { if ((call) != ACL_SUCCESS) { return 1; } } while (0)
static int PublishKey(const char *key)
{
    FILE *file = fopen("notify.key", "w");
    if (file == nullptr) {
        return -1;
    }
    fputs(key, file);
    fclose(file);
    return 0;
}
int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    aclrtNotify notify = nullptr;
    CHECK(aclrtCreateNotify(&notify, ACL_NOTIFY_DEFAULT));
    char key[65] = {0};
    CHECK(aclrtNotifyGetExportKey(notify, key, sizeof(key), 0));
    if (PublishKey(key) != 0) {
        return 1;
    }
    CHECK(aclrtWaitAndResetNotify(notify, stream, 0));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtDestroyNotify(notify));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
