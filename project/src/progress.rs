//! How far a check has come, for whoever shows it (a terminal's progress bar).

/// Told of the work of a check as it goes. Units are files or entry points.
pub trait Progress: Sync {
    /// `count` more units to go.
    fn add_work(&self, count: usize);
    /// One unit is about to be checked; `what` names it.
    fn start(&self, what: &str);
    /// One unit is done.
    fn finish_one(&self);
    /// Whether whoever asked no longer wants the result (an editor's text changed):
    /// checking stops, and what it found so far is incomplete.
    fn cancelled(&self) -> bool {
        false
    }
}

/// Nobody is watching.
pub struct Unobserved;

impl Progress for Unobserved {
    fn add_work(&self, _: usize) {}
    fn start(&self, _: &str) {}
    fn finish_one(&self) {}
}
