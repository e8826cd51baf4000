//! syncguard's runtime bridge: runs a program the analyzer has verified.
//!
//! A verified Program is instantiated for concrete parameter values (an Execution);
//! [`plan::Plan`] turns it into each host thread's calls in issue order; [`run`] plays
//! those calls against a [`backend::Backend`] ([`run_in_order`] in an order of the
//! host threads' calls that a finding names): the simulator ([`sim`], real threads and
//! memory, no device), the ACL/HCCL runtime ([`acl`]) or, with the `cuda` feature, the
//! CUDA driver. What was executed is logged, so it can be written as a call trace and
//! checked again.

pub mod acl;
pub mod backend;
#[cfg(feature = "cuda")]
pub mod cuda;
mod driver;
pub mod plan;
pub mod report;
pub mod sim;
mod turns;

pub use backend::{Backend, Fault};
pub use driver::{RunLog, run, run_in_order};
pub use plan::{Plan, cannot_run};
