//! Pieces both macros share.

pub(crate) mod debug;
pub(crate) mod diag;
pub(crate) mod docs;
pub(crate) mod paths;
