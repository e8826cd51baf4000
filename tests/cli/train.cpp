// A training step that reuses one event per iteration.
void step(aclrtStream copy, aclrtStream compute, aclrtEvent ready) {
    launch_copy(copy);
    aclrtRecordEvent(ready, copy);
    aclrtStreamWaitEvent(compute, ready);
}
