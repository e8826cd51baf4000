//! Rules about the input and the verification itself: the input is not a program (syntax,
//! trace format, names), or the solver could not decide a property.

pub mod solver_unknown;
pub mod syntax_error;
pub mod trace_format_error;
pub mod unknown_name;
