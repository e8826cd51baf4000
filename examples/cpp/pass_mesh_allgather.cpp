// expect: clean
// syncguard: ranks 2..=8
/*
 * Mesh all-gather of a custom HCCL op, issued from the host on the CPU_TS engine. Every
 * rank stages its slice into slot `rank` of its HCCL buffer; one worker thread per peer
 * writes that slice into slot `rank` of the peer's buffer (ACK: the peer's buffer is
 * ready, DATA_SIGNAL: the write landed); the main thread, bound to the caller's stream,
 * copies all slots out once every worker has reported back.
 * Worker i reports back on notify i of the main thread, which has one notify per worker.
 */
#include <cstdint>
#include <vector>
#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hccl/hccl_res.h"
#include "hccl/hcomm_primitives.h"

#define CHK_RET(expr)                                                              \
    do {                                                                           \
        HcclResult _ret = (expr);                                                  \
        if (_ret != HCCL_SUCCESS) {                                                \
            return _ret;                                                           \
        }                                                                          \
    } while (0)
#define CHK_HCOMM(expr) CHK_RET(static_cast<HcclResult>(expr))

namespace {
constexpr uint32_t NOTIFY_IDX_ACK = 0;
constexpr uint32_t NOTIFY_IDX_DATA_SIGNAL = 1;
constexpr uint32_t CHANNEL_NOTIFY_NUM = 2;
constexpr uint32_t CUSTOM_TIMEOUT = 1836; // seconds
constexpr uint64_t SLICE_BYTES = 1024 * 1024;

// The main thread releases the workers once the local slice is staged.
HcclResult ThreadSyncBefore(ThreadHandle mainThread, const std::vector<ThreadHandle> &workers, uint32_t peerNum)
{
    for (uint32_t i = 0; i < peerNum; ++i) {
        CHK_HCOMM(HcommThreadNotifyRecordOnThread(mainThread, workers[i], 0));
    }
    for (uint32_t i = 0; i < peerNum; ++i) {
        CHK_HCOMM(HcommThreadNotifyWaitOnThread(workers[i], 0, CUSTOM_TIMEOUT));
    }
    return HCCL_SUCCESS;
}

// Each worker reports back on its own notify of the main thread.
HcclResult ThreadSyncAfter(ThreadHandle mainThread, const std::vector<ThreadHandle> &workers, uint32_t peerNum)
{
    for (uint32_t i = 0; i < peerNum; ++i) {
        CHK_HCOMM(HcommThreadNotifyRecordOnThread(workers[i], mainThread, i));
    }
    for (uint32_t i = 0; i < peerNum; ++i) {
        CHK_HCOMM(HcommThreadNotifyWaitOnThread(mainThread, i, CUSTOM_TIMEOUT));
    }
    return HCCL_SUCCESS;
}
} // namespace

HcclResult RunAllGather(HcclComm comm, void *sendBuf, void *recvBuf, aclrtStream stream)
{
    uint32_t rank = 0;
    uint32_t rankSize = 0;
    CHK_RET(HcclGetRankId(comm, &rank));
    CHK_RET(HcclGetRankSize(comm, &rankSize));
    const uint32_t peerNum = rankSize - 1;

    // One notify on the main thread per worker ("worker i is done").
    ThreadHandle mainThread;
    CHK_RET(HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, stream, peerNum, &mainThread));
    std::vector<ThreadHandle> workers(peerNum);
    CHK_RET(HcclThreadAcquire(comm, COMM_ENGINE_CPU_TS, peerNum, 1, workers.data()));

    // Worker i talks to rank (rank + 1 + i) % rankSize.
    std::vector<HcclChannelDesc> descs(peerNum);
    CHK_RET(HcclChannelDescInit(descs.data(), peerNum));
    for (uint32_t i = 0; i < peerNum; ++i) {
        descs[i].remoteRank = (rank + 1 + i) % rankSize;
        descs[i].channelProtocol = COMM_PROTOCOL_HCCS;
        descs[i].notifyNum = CHANNEL_NOTIFY_NUM;
    }
    std::vector<ChannelHandle> channels(peerNum);
    CHK_RET(HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, descs.data(), peerNum, channels.data()));

    uint8_t *ccl = nullptr;
    uint64_t cclSize = 0;
    CHK_RET(HcclGetHcclBuffer(comm, reinterpret_cast<void **>(&ccl), &cclSize));

    CHK_HCOMM(HcommLocalCopyOnThread(mainThread, ccl + rank * SLICE_BYTES, sendBuf, SLICE_BYTES));
    CHK_RET(ThreadSyncBefore(mainThread, workers, peerNum));
    for (uint32_t i = 0; i < peerNum; ++i) {
        uint8_t *remoteCcl = nullptr;
        uint64_t remoteSize = 0;
        CHK_RET(HcclChannelGetHcclBuffer(comm, channels[i], reinterpret_cast<void **>(&remoteCcl), &remoteSize));
        CHK_HCOMM(HcommChannelNotifyRecordOnThread(workers[i], channels[i], NOTIFY_IDX_ACK));
        CHK_HCOMM(HcommChannelNotifyWaitOnThread(workers[i], channels[i], NOTIFY_IDX_ACK, CUSTOM_TIMEOUT));
        CHK_HCOMM(HcommWriteOnThread(workers[i], channels[i], remoteCcl + rank * SLICE_BYTES,
                                     ccl + rank * SLICE_BYTES, SLICE_BYTES));
        CHK_HCOMM(HcommChannelNotifyRecordOnThread(workers[i], channels[i], NOTIFY_IDX_DATA_SIGNAL));
        CHK_HCOMM(HcommChannelNotifyWaitOnThread(workers[i], channels[i], NOTIFY_IDX_DATA_SIGNAL, CUSTOM_TIMEOUT));
    }
    CHK_RET(ThreadSyncAfter(mainThread, workers, peerNum));
    CHK_HCOMM(HcommLocalCopyOnThread(mainThread, recvBuf, ccl, rankSize * SLICE_BYTES));
    return HCCL_SUCCESS;
}
