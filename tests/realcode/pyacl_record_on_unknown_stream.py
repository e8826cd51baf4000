# expect: clean
# The record's stream comes from a function the files do not define, so the record is
# left out (a reader's limit, listed with --explain). The wait on its event rests on it:
# it is undecided, not a hang (an SG104 error before).
import acl
from elsewhere import pick_stream


def run():
    s2, ret = acl.rt.create_stream()
    assert ret == 0
    ev, ret = acl.rt.create_event_with_flag(1)
    assert ret == 0
    assert acl.rt.record_event(ev, pick_stream()) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0
    assert acl.rt.synchronize_stream(s2) == 0
    assert acl.rt.destroy_event(ev) == 0
