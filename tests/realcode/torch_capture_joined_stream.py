# expect: clean
# Expected: no finding. During a graph capture a second stream waits for the capturing
# stream: in torch it then captures too (its work runs at each replay, not now), and
# the capturing stream waits for it before the capture ends. The model captures one
# stream, so the joined stream's work and the records and waits that join it are left
# out (listed) and what rests on them is undecided. Got: SG104 (the join's wait taken
# for a wait on a record that never happens) and SG601 (the joined stream's add taken
# to run at capture, racing the fill of y).
import torch
import torch_npu  # noqa: F401


def capture_across_streams():
    x = torch.randn(1024, device="npu")
    y = torch.rand_like(x)
    graph = torch.npu.NPUGraph()
    main, helper = torch.npu.Stream(), torch.npu.Stream()
    main.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(main):
        graph.capture_begin()
        z = x + y
    with torch.npu.stream(helper):
        helper.wait_stream(main)
        w = z + y
    main.wait_stream(helper)
    with torch.npu.stream(main):
        graph.capture_end()
    torch.npu.current_stream().wait_stream(main)
    graph.replay()
    return w
