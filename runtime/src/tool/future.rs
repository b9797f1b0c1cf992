//! The boxed futures tools return.

/// A boxed, sendable future, as [`Tool::call`](super::Tool::call) returns.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;
