# expect: clean
# pyACL: images are uploaded on a copy stream and classified on a compute stream;
# one event per image slot hands each buffer over, and is reset after the wait.
import acl

ACL_EVENT_SYNC = 0x1
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
IMAGE = 3 * 224 * 224 * 4
SLOTS = 2


def check(ret, what):
    if ret != 0:
        raise RuntimeError("%s: %d" % (what, ret))


def create_resources():
    copy, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    compute, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    events, host, dev, out = [], [], [], []
    for slot in range(SLOTS):
        event, ret = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
        check(ret, "create_event_with_flag")
        events.append(event)
        ptr, ret = acl.rt.malloc_host(IMAGE)
        check(ret, "malloc_host")
        host.append(ptr)
        ptr, ret = acl.rt.malloc(IMAGE, 0)
        check(ret, "malloc")
        dev.append(ptr)
        ptr, ret = acl.rt.malloc(IMAGE, 0)
        check(ret, "malloc")
        out.append(ptr)
    return copy, compute, events, host, dev, out


def classify(model_id, src, dst, stream):
    inputs = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(inputs, acl.create_data_buffer(src, IMAGE))
    outputs = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(outputs, acl.create_data_buffer(dst, IMAGE))
    check(acl.mdl.execute_async(model_id, inputs, outputs, stream), "execute_async")


def main(model_id=1):
    copy, compute, events, host, dev, out = create_resources()
    for slot in range(SLOTS):
        check(acl.rt.memcpy_async(dev[slot], IMAGE, host[slot], IMAGE, ACL_MEMCPY_HOST_TO_DEVICE, copy), "upload")
        check(acl.rt.record_event(events[slot], copy), "record_event")
    for slot in range(SLOTS):
        check(acl.rt.stream_wait_event(compute, events[slot]), "stream_wait_event")
        check(acl.rt.reset_event(events[slot], compute), "reset_event")
        classify(model_id, dev[slot], out[slot], compute)
        check(acl.rt.memcpy_async(host[slot], IMAGE, out[slot], IMAGE, ACL_MEMCPY_DEVICE_TO_HOST, compute), "download")
    check(acl.rt.synchronize_stream(compute), "synchronize_stream")
    check(acl.rt.synchronize_stream(copy), "synchronize_stream")
    for slot in range(SLOTS):
        acl.rt.destroy_event(events[slot])
        acl.rt.free(dev[slot])
        acl.rt.free(out[slot])
        acl.rt.free_host(host[slot])
    acl.rt.destroy_stream(copy)
    acl.rt.destroy_stream(compute)


if __name__ == "__main__":
    main()
