//! Where OAuth metadata is published relative to a URL: the resource's (RFC 9728) and the
//! authorization server's (RFC 8414) well-known paths go between the URL's origin and its path.

/// Where a resource server's Protected Resource Metadata is published (RFC 9728 §3).
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// `scheme://authority` and the path (`/` when none) of an `http` or `https` URL.
pub(super) fn split_url(url: &str) -> Option<(&str, &str)> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    let origin = &url[..url.len() - rest.len() + end];
    let path = &rest[end..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    Some((origin, if path.is_empty() { "/" } else { path }))
}
