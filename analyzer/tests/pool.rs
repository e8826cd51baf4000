//! A run on the configured pool starts no thread per entry point or per z3 query: the
//! first run beside the prover is a task of the pool, and each pool thread keeps one
//! z3 watchdog for its whole life.

use rayon::prelude::*;
use syncguard_analyzer::{Sources, check_sync_bytes, pool};

/// A parametric ring: the prover runs queries, and the first run is walked beside it.
const RING: &str = "ranks N in 2..=16;
let comm = HcclCommInitRootInfo(N, \"root\", rank);
let s = aclrtCreateStream();
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s, 2);
let next = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, { remoteRank: (rank + 1) % N, notifyNum: 1 }, 1);
let prev = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, { remoteRank: (rank + N - 1) % N, notifyNum: 1 }, 1);
HcommChannelNotifyRecordOnThread(t, next, 0);
HcommChannelNotifyWaitOnThread(t, prev, 0, 1836);
aclrtSynchronizeStream(s);
";

fn check_ring() -> usize {
    let checked = check_sync_bytes(&mut Sources::default(), "ring.sync", RING.as_bytes());
    assert!(
        checked
            .diagnostics
            .iter()
            .all(|d| d.code != "SG001" && d.code != "SG003")
    );
    checked.proofs.len()
}

#[test]
fn checks_on_the_pool_start_no_thread_of_their_own() {
    pool::configure(Some(2));
    // Off the pool (this test's own thread), a check starts its own threads: the
    // counter sees them.
    assert!(check_ring() > 0, "the prover proves something, so it ran queries");
    let outside = pool::threads_started_outside_pool();
    assert!(outside > 0);
    // On the pool, forty checks start none.
    let proofs: usize = (0..40).into_par_iter().map(|_| check_ring()).sum();
    assert!(proofs >= 40);
    assert_eq!(pool::threads_started_outside_pool(), outside);
}
