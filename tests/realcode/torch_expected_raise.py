# expect: clean
# Expected: no finding. The test checks that synchronizing a stream during its own
# capture raises: the code under `assertRaises` is expected to fail, and where it
# fails is not known, so it is not followed. Got: SG601 on x (the add taken to run on
# the stream at capture), then, with captures followed, SG504 (a synchronize that
# breaks the capture): the very error the test expects.
import unittest

import torch
import torch_npu  # noqa: F401


class CaptureTest(unittest.TestCase):
    def test_sync_during_capture_raises(self):
        stream = torch.npu.Stream()
        graph = torch.npu.NPUGraph()
        x = torch.ones(1, device="npu")
        with torch.npu.stream(stream):
            graph.capture_begin()
            with self.assertRaises(RuntimeError):
                (x + 1).item()
            graph.capture_end()
        torch.npu.current_stream().wait_stream(stream)
        graph.replay()
