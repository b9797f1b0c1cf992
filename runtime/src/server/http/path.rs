//! The endpoint's path, when the server owns the whole HTTP server (`Server::serve_http`): any
//! path but the endpoint's (and the OAuth metadata's, which its step serves) is `404`. A
//! mounted service is routed to by its application instead.

use http::{Request, StatusCode};

use super::reply::{Reply, text};

/// The paths served; `None` serves every path (a mounted service).
pub(crate) struct Paths(pub(crate) Option<Box<[String]>>);

impl Paths {
    /// The `404` of a request for a path not served.
    pub(crate) fn refusal<B>(&self, request: &Request<B>) -> Option<Reply> {
        let path = request.uri().path();
        let served = (self.0.as_ref()).is_none_or(|paths| paths.iter().any(|p| p == path));
        (!served).then(|| text(StatusCode::NOT_FOUND, "Not Found"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_endpoint_is_served() {
        let paths = Paths(Some(["/mcp".to_owned()].into()));
        let status = |paths: &Paths, path: &str| {
            let request = Request::get(path).body(()).unwrap();
            paths.refusal(&request).map(|refused| refused.status())
        };
        assert_eq!(status(&paths, "/mcp"), None);
        assert_eq!(status(&paths, "/mcp/"), Some(StatusCode::NOT_FOUND));
        assert_eq!(status(&paths, "/"), Some(StatusCode::NOT_FOUND));
        assert_eq!(status(&Paths(None), "/anything"), None);
    }
}
