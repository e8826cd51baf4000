# expect: SG601
# Expected: SG601: relu on the side stream reads y, written by matmul on the current stream, with no wait.
# Got: nothing: operations on tensors received as parameters are not kernels.
import torch
import torch_npu  # noqa: F401


def overlap(x, w):
    side = torch.npu.Stream()
    y = torch.matmul(x, w)
    with torch.npu.stream(side):
        z = torch.relu(y)
    torch.npu.current_stream().wait_stream(side)
    return z
