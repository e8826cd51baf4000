pub mod check;
pub mod fmt;
pub mod inputs;
pub mod output;
pub mod rules;
