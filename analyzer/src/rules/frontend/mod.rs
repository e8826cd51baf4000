//! Rules about the verification itself: the solver could not decide a property. The
//! rules about reading the input (syntax, trace format, names) are the model's
//! (`syncguard_model::reading_rules`): the frontends report them.

pub mod solver_unknown;
