//! The workspace's own package, never published: the integration tests (`tests/`), the
//! examples a user reads (`examples/`). This library only compiles and runs the README's Rust
//! examples as doc tests (`cargo test --doc`), against every feature of the runtime.

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
