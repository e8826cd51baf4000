pub mod check;
pub mod convert;
pub mod fmt;
pub mod inputs;
pub mod output;
pub mod rules;
pub mod sources;
pub mod verify_then_run;
