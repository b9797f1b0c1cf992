//! Envelopes as MCP results (ERRORS.md §1, §9): one text block, `isError` from the severity,
//! the mirror in `_meta`, never `structuredContent`, never a JSON-RPC error.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::ToolError;
use crate::envelope::{Envelope, push_mirror};
use crate::validate::ValidationError;

impl From<&ToolError> for CallToolResult {
    /// ```
    /// use mcp_fusion::{ErrorCode, ToolError};
    /// use mcp_fusion::rmcp::model::CallToolResult;
    ///
    /// let result = CallToolResult::from(&ToolError::new(ErrorCode::NOT_FOUND, "No invoice with that ID"));
    /// assert_eq!(result.is_error, Some(true));
    /// assert_eq!(result.content.len(), 1);
    /// assert!(result.structured_content.is_none());
    /// assert!(result.meta.is_some()); // the mirror, ERRORS.md §9
    /// ```
    fn from(err: &ToolError) -> Self {
        let content = vec![ContentBlock::text(err.render())];
        let mut result = match err.is_error() {
            true => CallToolResult::error(content),
            false => CallToolResult::success(content),
        };
        push_mirror(&mut result, err.mirror());
        result
    }
}

impl From<ToolError> for CallToolResult {
    fn from(err: ToolError) -> Self {
        Envelope::of(err).into_result()
    }
}

impl From<&ValidationError> for CallToolResult {
    /// ```
    /// use mcp_fusion::validate::{FieldPath, Problem, ValidationError};
    /// use mcp_fusion::rmcp::model::CallToolResult;
    ///
    /// let err = ValidationError::new("billing.get_invoice", vec![Problem::custom(FieldPath::root(), "Bad", None, None)]);
    /// assert_eq!(CallToolResult::from(&err).is_error, Some(true));
    /// ```
    fn from(err: &ValidationError) -> Self {
        err.envelope().into_result()
    }
}

impl From<ValidationError> for CallToolResult {
    fn from(err: ValidationError) -> Self {
        CallToolResult::from(&err)
    }
}

/// Adds a warning to a successful result as its last text block, and its mirror as the last
/// entry of `_meta`'s (ERRORS.md §9); `isError` stays false.
///
/// A `warning` that is in fact an error (severity `error` or `critical`) replaces the result:
/// a failed call carries exactly one envelope.
///
/// ```
/// use mcp_fusion::ToolError;
/// use mcp_fusion::errors::with_warning;
/// use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock};
///
/// let ok = CallToolResult::success(vec![ContentBlock::text("{\"id\":\"inv_1\"}")]);
/// let warned = with_warning(ok, &ToolError::deprecated("billing.void_invoice", None, Some("billing.cancel_invoice")));
/// assert_eq!(warned.is_error, Some(false));
/// assert_eq!(warned.content.len(), 2);
/// ```
pub fn with_warning(mut result: CallToolResult, warning: &ToolError) -> CallToolResult {
    if warning.is_error() {
        return CallToolResult::from(warning);
    }
    result.content.push(ContentBlock::text(warning.render()));
    push_mirror(&mut result, warning.mirror());
    result
}
