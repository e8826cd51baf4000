//! Rules reported while reading a file, before any analysis: the input is not a program.

pub mod syntax_error;
pub mod trace_format_error;
pub mod unknown_name;
