//! How far a check has come, for whoever shows it (a terminal's progress bar).

/// Told of the work of a check as it goes. Units are files or entry points.
pub trait Progress {
    /// `count` more units to go.
    fn add_work(&self, count: usize);
    /// One unit is about to be checked; `what` names it.
    fn start(&self, what: &str);
    /// One unit is done.
    fn finish_one(&self);
}

/// Nobody is watching.
pub struct Unobserved;

impl Progress for Unobserved {
    fn add_work(&self, _: usize) {}
    fn start(&self, _: &str) {}
    fn finish_one(&self) {}
}
