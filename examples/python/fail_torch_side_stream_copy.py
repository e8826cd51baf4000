# expect: SG601, SG602
# torch_npu: activations are offloaded to pinned host memory on a side stream while
# the default stream keeps computing; the side stream first waits for the producer,
# BUG: the side stream does not wait for the producer (the copy may read x before
# silu wrote it), and the host reads the copies without synchronizing the side stream.
import torch
import torch_npu  # noqa: F401


def offload_step(layers=2):
    offload = torch.npu.Stream()
    x = torch.randn(1024, 1024, device="npu")
    saved = []
    for layer in range(layers):
        x = torch.nn.functional.silu(x @ x)
        with torch.npu.stream(offload):
            saved.append(x.to("cpu", non_blocking=True))
    return [t.numpy().mean() for t in saved]
