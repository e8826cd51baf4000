// expect: clean
// Expected: no SG301: the notify is imported by key from another process (a main of its
// own, not in this run) that waits on it; the record here is consumed there.
#include <cstdio>
#include "acl/acl.h"
#define CHECK(call) do { if ((call) != ACL_SUCCESS) { return 1; } } while (0)
static int ReadKey(char *key, int size)
{
    FILE *file = fopen("notify.key", "r");
    if (file == nullptr) {
        return -1;
    }
    char *got = fgets(key, size, file);
    fclose(file);
    return got == nullptr ? -1 : 0;
}
int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    char key[65] = {0};
    if (ReadKey(key, sizeof(key)) != 0) {
        return 1;
    }
    aclrtNotify notify = nullptr;
    CHECK(aclrtNotifyImportByKey(&notify, key, 0));
    CHECK(aclrtRecordNotify(notify, stream));
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtDestroyNotify(notify));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
