# expect: clean
# Expected: no finding. While a graph is being captured elsewhere, the current stream
# waits for an external event and hands the event to a registry the files do not
# define, which records it later (an update stream does). What the registry does with
# the event is not known, so the wait is undecided. Got: SG104 ("waits forever:
# nothing records event").
import torch
import torch_npu  # noqa: F401


def attend(query, registry, capturing):
    if capturing:
        stream = torch.npu.current_stream()
        event = torch.npu.ExternalEvent()
        event.wait(stream)
        event.reset(stream)
        registry.events.append(event)
    return torch.nn.functional.softmax(query, dim=-1)
