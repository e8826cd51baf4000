/* Rank 0 of a one-rank run forks a helper process that makes calls of its own without
 * joining the communicator: the helper's file must not claim its parent's rank. */
#include "fake_acl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    HcclRootInfo root;
    HcclComm comm;
    aclrtStream stream;
    memset(&root, 0, sizeof root);
    HcclCommInitRootInfo(1, &root, 0, &comm);
    aclrtCreateStream(&stream);
    pid_t child = fork();
    if (child == 0) {
        aclrtStream own;
        aclrtCreateStream(&own);
        aclrtSynchronizeStream(own);
        aclrtDestroyStream(own);
        exit(0);
    }
    waitpid(child, NULL, 0);
    aclrtSynchronizeStream(stream);
    aclrtDestroyStream(stream);
    HcclCommDestroy(comm);
    return 0;
}
