//! Rules about the verification itself: the solver could not decide a property, a
//! suppression suppressed nothing, a run was too large to analyze. The
//! rules about reading the input (syntax, trace format, names) are the model's
//! (`syncguard_model::reading_rules`): the frontends report them.

pub mod solver_unknown;
pub mod too_large_to_analyze;
pub mod unused_suppression;
