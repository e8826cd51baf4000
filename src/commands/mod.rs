pub mod baseline;
pub mod check;
pub mod convert;
pub mod fmt;
pub mod output;
pub mod progress;
pub mod rules;
pub mod verify_then_run;
