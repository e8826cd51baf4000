//! CUDA stream capture and graphs (SG504).

pub mod capture_misuse;
