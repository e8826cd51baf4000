# expect: clean
# Expected: no finding. A test moves its input to the device it is parametrized with
# (`device`, which no analyzed code gives): where the tensor goes is not known, so it
# is not followed. Got: SG602: the moved tensor taken to stay on the host, a device
# operation on it taken to write that host memory, and the host's read of the
# original racing it.
import torch
import torch_npu  # noqa: F401


def check_index_add(device):
    t = torch.arange(8, dtype=torch.float32)
    t_dev = t.to(device)
    t_dev.add_(torch.ones(8).npu())
    assert torch.equal(t_dev.cpu(), t + 1)
