//! Listing an upstream's tools, within bounds whatever the upstream answers: at most
//! [`MAX_PAGES`] pages and [`MAX_BYTES`] of tools, within the upstream's `connect_timeout`.
//! An upstream that keeps saying its tools changed is listed once more after the listing in
//! progress, however many times it says so meanwhile, and at most once per
//! [`RELIST_SPACING`].

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{PaginatedRequestParams, Tool};
use rmcp::{Peer, RoleClient};

/// The most pages of `tools/list` read from one upstream.
pub(crate) const MAX_PAGES: usize = 64;
/// The most bytes of tool definitions (as JSON) kept of one upstream.
pub(crate) const MAX_BYTES: usize = 4 << 20;
/// The least time between the end of a listing and the next, when the upstream asked again.
pub(crate) const RELIST_SPACING: std::time::Duration = std::time::Duration::from_secs(1);

/// Every tool `peer` lists, page after page, within the bounds; or why not.
pub(crate) async fn list(peer: &Peer<RoleClient>, within: Duration) -> Result<Vec<Tool>, String> {
    let listing = async {
        let mut tools = Vec::new();
        let mut bytes = 0;
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let mut request = PaginatedRequestParams::default();
            request.cursor = cursor;
            let page = peer
                .list_tools(Some(request))
                .await
                .map_err(|e| format!("tools/list: {e}"))?;
            for tool in page.tools {
                bytes += serde_json::to_vec(&tool).map_or(0, |json| json.len());
                if bytes > MAX_BYTES {
                    return Err(format!(
                        "tools/list: the tools are over {MAX_BYTES} bytes, the most a gateway keeps"
                    ));
                }
                tools.push(tool);
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(tools),
            }
        }
        Err(format!(
            "tools/list: more than {MAX_PAGES} pages, the most a gateway reads"
        ))
    };
    tokio::time::timeout(within, listing)
        .await
        .unwrap_or_else(|_| Err(format!("tools/list: no whole listing within {within:?}")))
}

/// One listing at a time, and at most one more asked for meanwhile.
#[derive(Default)]
pub(crate) struct Coalesced(Mutex<Relisting>);

#[derive(Default)]
struct Relisting {
    running: bool,
    again: bool,
}

impl Coalesced {
    /// Asks for a listing: `true` when the caller is to run it (none is running), `false` when
    /// the one running will run once more.
    pub(crate) fn ask(&self) -> bool {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if state.running {
            state.again = true;
            return false;
        }
        state.running = true;
        true
    }

    /// The listing ended: `true` when another was asked for meanwhile (the caller runs it).
    pub(crate) fn done(&self) -> bool {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if std::mem::take(&mut state.again) {
            return true;
        }
        state.running = false;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_while_one_runs_make_one_more() {
        let relisting = Coalesced::default();
        assert!(relisting.ask());
        for _ in 0..1000 {
            assert!(!relisting.ask());
        }
        assert!(relisting.done(), "one more");
        assert!(!relisting.done(), "and no more");
        assert!(relisting.ask());
    }
}
