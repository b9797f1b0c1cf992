//! The round states used already, recorded in Redis so that one `requestState` runs once in
//! the fleet: one key per state, named by its digest (no caller's data), gone with the state's
//! lifetime.

use std::sync::Arc;
use std::time::Duration;

use super::scripts::SCRIPTS;
use super::shared::Inner;
use crate::server::limits::UsedStates;
use crate::tool::BoxFuture;

pub(super) struct RedisUsed(pub(super) Arc<Inner>);

impl UsedStates for RedisUsed {
    fn spend(&self, id: [u8; 32], ttl: Duration) -> BoxFuture<'_, Result<bool, String>> {
        Box::pin(async move {
            let key = format!("{}:used:{}", self.0.prefix, crate::hex::lower(&id));
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let recorded: i64 = (self.0)
                .run(&SCRIPTS.once, &key, ttl_ms)
                .await
                .map_err(|e| e.to_string())?;
            Ok(recorded == 1)
        })
    }
}
