// expect: SG107
// Stage helpers shared by the training loop in main.cpp.
#pragma once

#include <cstdint>
#include <cstdio>
#include "acl/acl.h"

#define ACL_CHECK(expr)                                                            \
    do {                                                                           \
        auto _ret = (expr);                                                        \
        if (_ret != ACL_SUCCESS) {                                                 \
            fprintf(stderr, "[ERROR] %s failed with %d\n", #expr, (int)_ret);      \
            return -1;                                                             \
        }                                                                          \
    } while (0)

constexpr size_t kGradBytes = 1024 * 1024;
constexpr uint32_t kBlockDim = 32;

extern "C" __global__ __aicore__ void backward(__gm__ const uint8_t *act, __gm__ uint8_t *grad);
extern "C" __global__ __aicore__ void grad_scale(__gm__ const uint8_t *grad, __gm__ uint8_t *out);

struct StageStreams {
    aclrtStream compute = nullptr;
    aclrtStream comm = nullptr;
};

int CreateStageStreams(StageStreams &ss);
int DestroyStageStreams(StageStreams &ss);

// Runs backward on ss.compute and grad_scale on ss.comm, ordered by a fresh event that
// is returned in `done` (the caller owns it).
int LaunchStage(StageStreams &ss, uint8_t *act, uint8_t *grad, uint8_t *out, aclrtEvent &done);
