/* The stand-in libhccl.so: communicators (HcclCommInitAll: one process, one rank per
 * device), their HCCL buffers, and the error strings. See standin.h. */
#include "standin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next_group = 1;

static uint64_t hccl_buffer_size(void) {
    const char *mb = getenv("ACL_STANDIN_HCCL_BUFFER_MB");
    uint64_t size = mb && *mb ? strtoull(mb, NULL, 10) : 400;
    return size << 20;
}

/* Rank i of the group is devices[i]; every device must have been opened by this process
 * (aclrtSetDevice) first. */
EXPORT HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms) {
    if (standin_fail("HcclCommInitAll"))
        return HCCL_E_INTERNAL;
    if (!ndev || !devices || !comms)
        return HCCL_E_PTR;
    standin_lock();
    for (uint32_t i = 0; i < ndev; i++)
        if (!standin_device_open(devices[i])) {
            standin_unlock();
            return HCCL_E_PARA;
        }
    uint64_t group = next_group++;
    struct comm **members = calloc(ndev, sizeof *members);
    uint64_t size = hccl_buffer_size();
    for (uint32_t i = 0; i < ndev; i++) {
        struct comm *c = calloc(1, sizeof *c);
        c->group = group;
        c->rank = i;
        c->ranks = ndev;
        c->device = devices[i];
        /* Untouched pages of a large calloc cost nothing. Library-owned: never freed. */
        c->buffer = calloc(1, size);
        c->buffer_size = size;
        c->members = members;
        c->live = 1;
        standin_memory_add(c->buffer, size, 0, 0);
        standin_register(K_COMM, c);
        members[i] = c;
        comms[i] = c;
    }
    standin_unlock();
    return 0;
}

EXPORT HcclResult HcclCommDestroy(HcclComm comm) {
    if (standin_fail("HcclCommDestroy"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct comm *c = standin_find(K_COMM, comm);
    if (c) {
        c->live = 0;
        standin_unregister(K_COMM, c);
    }
    standin_unlock();
    return c ? 0 : HCCL_E_PARA;
}

EXPORT HcclResult HcclGetHcclBuffer(HcclComm comm, void **buffer, uint64_t *size) {
    if (standin_fail("HcclGetHcclBuffer"))
        return HCCL_E_INTERNAL;
    standin_lock();
    struct comm *c = standin_find(K_COMM, comm);
    if (c && buffer && size) {
        *buffer = c->buffer;
        *size = c->buffer_size;
    }
    standin_unlock();
    return c && buffer && size ? 0 : HCCL_E_PARA;
}

EXPORT const char *HcclGetErrorString(HcclResult code) {
    switch (code) {
    case 0:
        return "success";
    case HCCL_E_PARA:
        return "parameter error";
    case HCCL_E_PTR:
        return "empty pointer";
    case HCCL_E_INTERNAL:
        return "internal error (injected by ACL_STANDIN_FAIL)";
    case HCCL_E_NOT_SUPPORT:
        return "not supported";
    case HCCL_E_TIMEOUT:
        return "timeout";
    default:
        return NULL;
    }
}
