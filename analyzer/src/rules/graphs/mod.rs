//! SG7xx: CUDA stream capture and graphs.

pub mod capture_misuse;
