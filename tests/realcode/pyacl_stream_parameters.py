# expect: SG103
# Expected: SG103 (the reset on s2 can run before s3's wait). Got: every call on s1/s2/s3 "left out: its argument
# `stream` has no value the extraction can follow"; nothing is checked.
import acl

ACL_EVENT_SYNC = 0x1


def fan_out(s1, s2, s3):
    event, ret = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
    assert ret == 0
    assert acl.rt.record_event(event, s1) == 0
    assert acl.rt.stream_wait_event(s2, event) == 0
    assert acl.rt.reset_event(event, s2) == 0
    assert acl.rt.stream_wait_event(s3, event) == 0
    assert acl.rt.synchronize_stream(s3) == 0
    assert acl.rt.destroy_event(event) == 0
