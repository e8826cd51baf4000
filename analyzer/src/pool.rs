//! The threads of a run. The command line and the language server configure rayon's
//! global pool once ([`configure`]): one thread per core, each with the stack a walk
//! needs and, from its first z3 query on, a z3 context and a watchdog (none before: a
//! file with no query creates no context). Entry points, the first run beside the
//! prover and every z3 query then run on those threads, so a run over thousands of
//! entry points starts a bounded number of threads, not one or more per entry point
//! and query. Code on a thread outside the pool (a library user, a test) starts what
//! it needs for itself, as before.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::exec::WALK_STACK;

thread_local! {
    static IN_POOL: Cell<bool> = const { Cell::new(false) };
}

/// Configure rayon's global pool (once, before anything uses it): `threads` threads, or
/// one per core when `None`. Does nothing if the pool already exists.
pub fn configure(threads: Option<usize>) {
    let mut builder = rayon::ThreadPoolBuilder::new()
        .thread_name(|index| format!("syncguard-{index}"))
        .spawn_handler(|thread| {
            std::thread::Builder::new()
                .name(thread.name().unwrap_or("syncguard").to_string())
                .stack_size(WALK_STACK)
                .spawn(move || {
                    crate::smt::watchdog::with_watchdog(|| {
                        IN_POOL.with(|flag| flag.set(true));
                        thread.run();
                    })
                })?;
            Ok(())
        });
    if let Some(threads) = threads {
        builder = builder.num_threads(threads);
    }
    let _ = builder.build_global();
}

/// Whether the running thread is one of the configured pool's.
pub(crate) fn in_pool() -> bool {
    IN_POOL.with(Cell::get)
}

static STARTED_OUTSIDE: AtomicUsize = AtomicUsize::new(0);

/// Count a thread started for one task because the caller is not on a pool thread.
pub(crate) fn started_outside_pool() {
    STARTED_OUTSIDE.fetch_add(1, Ordering::Relaxed);
}

/// Threads started for one task (a first run, a z3 query's watchdog) since the process
/// began: none when everything runs on the configured pool.
pub fn threads_started_outside_pool() -> usize {
    STARTED_OUTSIDE.load(Ordering::Relaxed)
}

/// Drop `value` on a pool thread: freeing a large program takes a tenth of a second per
/// million calls, which the next file and the report need not wait for.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    rayon::spawn(move || drop(value));
}
