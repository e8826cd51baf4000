//! SG7xx: source lint, what a call's arguments or use say beyond its effect
//! (SG701, unchecked returns, is reported by the source frontends while reading).

pub mod timeout_unit;
