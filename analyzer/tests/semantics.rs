//! The distinctions the model must draw, stated once each (README, "How the analysis works").

use std::collections::BTreeSet;

use syncguard_analyzer::{Sources, check_sync_bytes};

fn codes(src: &str) -> BTreeSet<&'static str> {
    let mut sources = Sources::default();
    check_sync_bytes(&mut sources, "test.sync", src.as_bytes())
        .diagnostics
        .iter()
        .flat_map(|d| d.codes())
        .collect()
}

fn set(codes: &[&'static str]) -> BTreeSet<&'static str> {
    codes.iter().copied().collect()
}

/// s1 waits for e2, which s2 records after waiting for e1, which s1 records after its wait.
fn cross_wait(create: &str) -> String {
    format!(
        "let s1 = aclrtCreateStream();
         let s2 = aclrtCreateStream();
         let e1 = {create};
         let e2 = {create};
         let x = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);
         aclrtStreamWaitEvent(s1, e2);
         kernel(s1, \"consumer\", reads: [x]);
         aclrtRecordEvent(e1, s1);
         kernel(s2, \"producer\", writes: [x]);
         aclrtStreamWaitEvent(s2, e1);
         aclrtRecordEvent(e2, s2);
         aclrtDestroyEvent(e1);
         aclrtDestroyEvent(e2);"
    )
}

#[test]
fn cross_wait_is_a_deadlock_with_sync_events_and_a_race_with_capture_events() {
    let sync = codes(&cross_wait("aclrtCreateEventWithFlag(ACL_EVENT_SYNC)"));
    assert_eq!(sync, set(&["SG501"]));
    let capture = codes(&cross_wait("aclrtCreateEventExWithFlag(ACL_EVENT_SYNC)"));
    assert!(capture.contains("SG104") && capture.contains("SG601"), "{capture:?}");
    assert!(
        !capture.contains("SG501"),
        "capture-kind waits bind at issue time: no deadlock"
    );
}

fn two_waiters(reset_and_sync: &str) -> String {
    format!(
        "let s1 = aclrtCreateStream();
         let s2 = aclrtCreateStream();
         let s3 = aclrtCreateStream();
         let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
         aclrtRecordEvent(ev, s1);
         aclrtStreamWaitEvent(s2, ev);
         {reset_and_sync}
         aclrtSynchronizeDevice();
         aclrtDestroyEvent(ev);"
    )
}

#[test]
fn reset_after_all_waiters_synchronized_is_clean_reset_between_waits_is_sg103() {
    let between = codes(&two_waiters("aclrtResetEvent(ev, s2); aclrtStreamWaitEvent(s3, ev);"));
    assert_eq!(between, set(&["SG103"]));
    let after = codes(&two_waiters(
        "aclrtStreamWaitEvent(s3, ev); aclrtSynchronizeStream(s3); aclrtSynchronizeStream(s2); aclrtResetEvent(ev, s2);",
    ));
    assert_eq!(after, set(&[]));
}

#[test]
fn a_reset_behind_its_own_wait_does_not_hide_a_later_record() {
    // The reset runs on s2 after s2's wait, so the record issued after it still
    // satisfies that wait: no hang, and no SG104.
    let src = "let s1 = aclrtCreateStream();
               let s2 = aclrtCreateStream();
               let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
               aclrtStreamWaitEvent(s2, ev);
               aclrtResetEvent(ev, s2);
               aclrtRecordEvent(ev, s1);
               aclrtSynchronizeDevice();
               aclrtDestroyEvent(ev);";
    assert_eq!(codes(src), set(&[]));
}

#[test]
fn a_wait_after_a_synchronized_reset_needs_a_new_record() {
    let src = "let s1 = aclrtCreateStream();
               let s2 = aclrtCreateStream();
               let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
               aclrtRecordEvent(ev, s1);
               aclrtStreamWaitEvent(s2, ev);
               aclrtResetEvent(ev, s2);
               aclrtSynchronizeStream(s2);
               aclrtStreamWaitEvent(s2, ev);";
    assert!(codes(src).contains("SG104"));
}

/// s1 waits before anything records the event, then records it itself: that record is
/// queued behind the wait and can never set the flag first.
fn wait_then_own_record(other_record: &str) -> String {
    format!(
        "let s1 = aclrtCreateStream();
         let s2 = aclrtCreateStream();
         let ev = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
         aclrtStreamWaitEvent(s1, ev);
         aclrtRecordEvent(ev, s1);
         {other_record}
         aclrtSynchronizeDevice();
         aclrtDestroyEvent(ev);"
    )
}

#[test]
fn a_record_queued_behind_the_wait_cannot_satisfy_it_but_a_record_elsewhere_can() {
    // Found by the simulator (differential test): the wait passes on s2's record.
    let satisfied = codes(&wait_then_own_record("aclrtRecordEvent(ev, s2);"));
    assert!(
        !satisfied.contains("SG501") && !satisfied.contains("SG502"),
        "{satisfied:?}"
    );
    let alone = codes(&wait_then_own_record(""));
    assert!(alone.contains("SG501"), "waiting for its own later record: {alone:?}");
}
