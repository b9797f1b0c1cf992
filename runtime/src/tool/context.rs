//! What an action's handler gets besides its arguments.

use std::sync::Arc;

use crate::{Text, ToolError};

/// What an action's handler gets besides its arguments: the action it runs as, and helpers
/// that build its errors and warnings.
///
/// ```
/// use mcp_fusion::{Context, ErrorCode};
/// let f = Context::detached("billing.get_invoice");
/// let err = f.error(ErrorCode::NOT_FOUND, "No invoice with that ID");
/// assert_eq!(err.code(), &ErrorCode::NOT_FOUND);
/// f.warn(f.error(ErrorCode::DEPRECATED, "Old field used."));
/// assert_eq!(f.take_warnings().len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Context {
    action: Arc<str>,
    warnings: Arc<std::sync::Mutex<Vec<ToolError>>>,
}

impl Context {
    pub(crate) fn new(action: Arc<str>) -> Self {
        Context {
            action,
            warnings: Arc::default(),
        }
    }

    /// A context outside any server, for tests of handlers.
    pub fn detached(qualified_action: impl Into<Arc<str>>) -> Self {
        Self::new(qualified_action.into())
    }

    /// The qualified action this call runs (`billing.get_invoice`).
    pub fn action(&self) -> &str {
        &self.action
    }

    /// Starts an error of this action: [`crate::error`], ready to return.
    pub fn error(&self, code: crate::ErrorCode, message: impl Into<Text>) -> ToolError {
        crate::error(code, message)
    }

    /// MISSING_REQUIRED_FIELD for `field`.
    pub fn required(&self, field: &str) -> ToolError {
        ToolError::missing_required_field(field)
    }

    /// Adds a warning to this call's successful result (its severity becomes `warning`).
    pub fn warn(&self, warning: ToolError) {
        let mut warnings = self
            .warnings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        warnings.push(warning.warning());
    }

    /// The warnings added so far, in order, leaving none.
    pub fn take_warnings(&self) -> Vec<ToolError> {
        std::mem::take(
            &mut *self
                .warnings
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}
