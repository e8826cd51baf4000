/* One rank of a two-process run (`rank_order_deadlock RANK DIR`): each rank shares a
 * notify with the other by its export key (through files in DIR), then waits for the
 * other's notify before recording its own. Both wait first: a deadlock across the two
 * processes (SG501). */
#include "fake_acl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void publish(const char *dir, int rank, const char *key) {
    char path[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/key%d", dir, rank);
    snprintf(tmp, sizeof tmp, "%s/key%d.tmp", dir, rank);
    FILE *f = fopen(tmp, "w");
    fputs(key, f);
    fclose(f);
    rename(tmp, path);
}

static int fetch(const char *dir, int rank, char *key, size_t len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/key%d", dir, rank);
    for (int tries = 0; tries < 1000; tries++) {
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(key, 1, len - 1, f);
            key[n] = 0;
            fclose(f);
            return 0;
        }
        usleep(10000);
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    int rank = atoi(argv[1]);
    const char *dir = argv[2];
    HcclRootInfo root;
    HcclComm comm;
    aclrtStream stream;
    aclrtNotify mine, peer;
    char key[128], peer_key[128];
    aclInit(NULL);
    aclrtSetDevice(rank);
    memset(&root, 0, sizeof root);
    HcclCommInitRootInfo(2, &root, (uint32_t)rank, &comm);
    aclrtCreateStream(&stream);
    aclrtCreateNotify(&mine, 0);
    aclrtNotifyGetExportKey(mine, key, sizeof key, 0);
    publish(dir, rank, key);
    if (fetch(dir, 1 - rank, peer_key, sizeof peer_key) != 0) return 3;
    aclrtNotifyImportByKey(&peer, peer_key, 0);
    aclrtWaitAndResetNotify(peer, stream, 0);
    aclrtRecordNotify(mine, stream);
    aclrtSynchronizeStream(stream);
    HcclCommDestroy(comm);
    aclFinalize();
    return 0;
}
