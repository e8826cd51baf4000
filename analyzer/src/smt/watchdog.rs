//! The timer that interrupts a z3 query at its deadline. z3's own `timeout` parameter is
//! not used: its timer can deadlock in the z3 4.8.10-4.8.12 that Debian ships
//! (Z3Prover/z3#5371). A watchdog thread interrupts the context instead.
//!
//! A thread of the analysis pool (see `crate::pool`) starts one watchdog at its first
//! query and keeps it for the rest of its life, every later query arming and disarming
//! it; a thread outside the pool starts one per query. Nothing is started before a
//! first query: a z3 context costs some 4,000 page faults (16 MiB touched), so creating
//! one per pool thread up front made a small file's check cost a few milliseconds per
//! core. A check waits until its watchdog is disarmed, so an interrupt never lands
//! on a later query. The z3 objects themselves never leave their thread: the watchdog
//! holds only the context's interrupt handle.

use std::cell::{Cell, RefCell};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Instant;

use z3::{Context, ContextHandle, SatResult, Solver};

enum Order {
    /// Interrupt at this instant unless disarmed first.
    Arm(Instant),
    /// Forget the deadline, then acknowledge.
    Disarm(Sender<()>),
}

/// The running thread's watchdog: its orders, and the z3 context it interrupts.
struct Installed {
    orders: Sender<Order>,
    /// The context's address: queries on another context start their own watchdog.
    context: usize,
    watcher: JoinHandle<()>,
}

thread_local! {
    /// Whether this thread keeps a watchdog once its first query starts one.
    static KEEPS_WATCHDOG: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread's queries run in a context of their own for now (see
    /// [`in_own_context`]): its lasting watchdog is not installed on that one.
    static IN_OWN_CONTEXT: Cell<bool> = const { Cell::new(false) };
    static WATCHDOG: RefCell<Option<Installed>> = const { RefCell::new(None) };
}

/// Run `work` with a watchdog for this thread's z3 context beside it from its first
/// query to the end of `work`: the body of a pool thread.
pub fn with_watchdog<T>(work: impl FnOnce() -> T) -> T {
    KEEPS_WATCHDOG.with(|keeps| keeps.set(true));
    let result = work();
    KEEPS_WATCHDOG.with(|keeps| keeps.set(false));
    if let Some(installed) = WATCHDOG.with(|installed| installed.borrow_mut().take()) {
        // Dropping the sender ends the watchdog.
        drop(installed.orders);
        let _ = installed.watcher.join();
    }
    result
}

/// Run `work` with z3 in a fresh context (`crate::smt::with_own_context`). Its queries
/// each start a watchdog of their own; the thread's lasting one stays on the thread's
/// context.
pub fn in_own_context<R: Send + Sync>(work: impl FnOnce() -> R + Send + Sync) -> R {
    let outer = IN_OWN_CONTEXT.with(|own| own.replace(true));
    let result = z3::with_z3_config(&z3::Config::new(), work);
    IN_OWN_CONTEXT.with(|own| own.set(outer));
    result
}

/// Start this thread's lasting watchdog on its z3 context, if it keeps one and has none.
fn install() {
    if !KEEPS_WATCHDOG.with(Cell::get)
        || IN_OWN_CONTEXT.with(Cell::get)
        || WATCHDOG.with(|installed| installed.borrow().is_some())
    {
        return;
    }
    // The context must outlive the watchdog, which holds its interrupt handle: the
    // thread's context lives as long as the thread, and this clone as long as the
    // process (one per pool thread).
    let context: &'static Context = Box::leak(Box::new(Context::thread_local()));
    let handle = context.handle();
    let (orders, received) = mpsc::channel();
    if let Ok(watcher) = std::thread::Builder::new().spawn(move || watch(&handle, received)) {
        WATCHDOG.with(|installed| {
            *installed.borrow_mut() = Some(Installed {
                orders,
                context: context.get_z3_context().as_ptr() as usize,
                watcher,
            })
        });
    }
}

/// `solver.check()`, interrupted at `deadline`.
pub fn check_until(solver: &Solver, deadline: Instant) -> SatResult {
    let context = solver.get_context().get_z3_context().as_ptr() as usize;
    install();
    let orders = WATCHDOG.with(|installed| {
        installed
            .borrow()
            .as_ref()
            .filter(|installed| installed.context == context)
            .map(|installed| installed.orders.clone())
    });
    match orders {
        Some(orders) => check_with(&orders, solver, deadline),
        None => check_with_own_watchdog(solver, deadline),
    }
}

fn check_with(orders: &Sender<Order>, solver: &Solver, deadline: Instant) -> SatResult {
    if orders.send(Order::Arm(deadline)).is_err() {
        return check_with_own_watchdog(solver, deadline);
    }
    let result = solver.check();
    let (done, disarmed) = mpsc::channel();
    if orders.send(Order::Disarm(done)).is_ok() {
        let _ = disarmed.recv();
    }
    result
}

/// A watchdog of its own for one check, on a thread outside the pool.
fn check_with_own_watchdog(solver: &Solver, deadline: Instant) -> SatResult {
    crate::pool::started_outside_pool();
    let context = solver.get_context();
    let handle = context.handle();
    let (finished, watch) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let handle = &handle;
        scope.spawn(move || {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if watch.recv_timeout(remaining) == Err(RecvTimeoutError::Timeout) {
                handle.interrupt();
            }
        });
        let result = solver.check();
        // The watchdog may already be gone (it fired): nothing to tell it then.
        let _ = finished.send(());
        result
    })
}

/// The watchdog's loop: wait for orders, interrupting the context when an armed deadline
/// passes; end when the orders' sender is dropped.
fn watch(handle: &ContextHandle, orders: Receiver<Order>) {
    let mut deadline: Option<Instant> = None;
    loop {
        let order = match deadline {
            Some(at) => match orders.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(order) => order,
                Err(RecvTimeoutError::Timeout) => {
                    handle.interrupt();
                    deadline = None;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => return,
            },
            None => match orders.recv() {
                Ok(order) => order,
                Err(_) => return,
            },
        };
        match order {
            Order::Arm(at) => deadline = Some(at),
            Order::Disarm(done) => {
                deadline = None;
                let _ = done.send(());
            }
        }
    }
}
