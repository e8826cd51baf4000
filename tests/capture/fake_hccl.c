/* A stand-in for libhccl.so: a communicator remembers the rank it was made for. */
#include "fake_acl.h"

#include <stdlib.h>

typedef struct {
    uint32_t rank;
} FakeComm;

HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo) { return 0; }
HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm) {
    FakeComm *made = malloc(sizeof *made);
    made->rank = rank;
    *comm = made;
    return 0;
}
HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank) {
    *rank = ((FakeComm *)comm)->rank;
    return 0;
}
HcclResult HcclCommDestroy(HcclComm comm) {
    free(comm);
    return 0;
}
