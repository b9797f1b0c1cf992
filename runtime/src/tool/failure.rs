//! [`Failure`]: why a handler did not produce a result.

use std::error::Error as StdError;

use crate::ToolError;
use crate::validate::ValidationError;

/// Why a handler did not produce a result.
#[derive(Debug)]
pub enum Failure {
    /// A tool error: sent intact.
    Tool(ToolError),
    /// Arguments that passed the schema but not the handler's own decoding.
    Invalid(ValidationError),
    /// Anything else: sent as INTERNAL_ERROR, the cause kept for the log.
    Internal(Box<dyn StdError + Send + Sync>),
}

impl From<ToolError> for Failure {
    fn from(err: ToolError) -> Self {
        Failure::Tool(err)
    }
}
