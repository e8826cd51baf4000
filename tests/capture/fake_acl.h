/* The ACL runtime and HCCL prototypes the capture tests use, as CANN declares them
 * (acl/acl_rt.h, hccl/hccl.h), written for these tests. */
#ifndef FAKE_ACL_H
#define FAKE_ACL_H
#include <stddef.h>
#include <stdint.h>

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtNotify;
typedef enum { ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY } aclrtMemMallocPolicy;
typedef enum {
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;
#define ACL_EVENT_SYNC 0x1u

aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtCreateNotify(aclrtNotify *notify, uint64_t flag);
aclError aclrtDestroyNotify(aclrtNotify notify);
aclError aclrtRecordNotify(aclrtNotify notify, aclrtStream stream);
aclError aclrtWaitAndResetNotify(aclrtNotify notify, aclrtStream stream, uint32_t timeout);
aclError aclrtNotifyGetExportKey(aclrtNotify notify, char *key, size_t len, uint64_t flags);
aclError aclrtNotifyImportByKey(aclrtNotify *notify, const char *key, uint64_t flags);
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream);

typedef int HcclResult;
typedef void *HcclComm;
typedef struct {
    char internal[4108];
} HcclRootInfo;

HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);
HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank, HcclComm *comm);
HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank);
HcclResult HcclCommDestroy(HcclComm comm);

/* HCOMM threads and channels, with HcclChannelDesc laid out as HCCL documents it. */
typedef uint64_t ThreadHandle;
typedef uint64_t ChannelHandle;
typedef enum { COMM_ENGINE_CPU = 0, COMM_ENGINE_CPU_TS = 1, COMM_ENGINE_AICPU = 2, COMM_ENGINE_AICPU_TS = 3 } CommEngine;
typedef enum { COMM_PROTOCOL_HCCS = 0, COMM_PROTOCOL_ROCE = 1 } CommProtocol;
typedef struct {
    uint32_t version, magicWord, size, reserved;
} CommAbiHeader;
typedef struct {
    int type;
    union {
        uint8_t raws[36];
        uint32_t id;
    };
} CommAddr;
typedef struct {
    int locType;
    union {
        uint8_t raws[60];
    };
} EndpointLoc;
typedef struct {
    CommProtocol protocol;
    CommAddr commAddr;
    EndpointLoc loc;
    union {
        uint8_t raws[52];
    };
} EndpointDesc;
typedef struct {
    CommAbiHeader header;
    uint32_t remoteRank;
    CommProtocol channelProtocol;
    EndpointDesc localEndpoint;
    EndpointDesc remoteEndpoint;
    uint32_t notifyNum;
    void *memHandles;
    uint32_t memHandleNum;
    union {
        uint8_t raws[128];
        struct {
            uint32_t queueNum, retryCnt, retryInterval;
            uint8_t tc, sl;
        } roceAttr;
    };
} HcclChannelDesc;

HcclResult HcclThreadAcquire(HcclComm comm, CommEngine engine, uint32_t threadNum, uint32_t notifyNumPerThread,
                             ThreadHandle *threads);
HcclResult HcclChannelDescInit(HcclChannelDesc *descs, uint32_t num);
HcclResult HcclChannelAcquire(HcclComm comm, CommEngine engine, const HcclChannelDesc *channelDescs,
                              uint32_t channelNum, ChannelHandle *channels);
HcclResult HcommChannelNotifyRecordOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t remoteNotifyIdx);
HcclResult HcommChannelNotifyWaitOnThread(ThreadHandle thread, ChannelHandle channel, uint32_t localNotifyIdx,
                                          uint32_t timeOut);
HcclResult HcommThreadSynchronize(ThreadHandle thread);
#endif
