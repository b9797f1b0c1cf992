//! The rounds of a 2026-07-28 call that asks its client (SEP-2322): the `requestState` a round
//! ends with, sealed with rmcp's `RequestStateCodec` (HMAC-SHA-256 under the server's secret)
//! and bound to the call (the tool called, a digest of its arguments, the verified caller) and
//! to a lifetime, so that any replica sharing the secret can trust it on the next round without
//! a shared store; and its refusal when it was altered, expired, made for another call, or
//! already used here.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::ToolError;

/// How long a round's `requestState` is good for by default.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);

/// The most states remembered as used, per process.
const MAX_USED: usize = 100_000;

/// What a sealed state holds: a nonce, for telling one round from another, and a digest of
/// what binds it to its call (read back to tell a state made for another call from an altered
/// one, which the tag alone cannot).
#[derive(Serialize, Deserialize)]
struct State {
    nonce: u64,
    bound: String,
}

fn digest(binding: &[u8]) -> String {
    Sha256::digest(binding)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The rounds of this server's calls.
pub(crate) struct Rounds {
    codec: RequestStateCodec,
    ttl: Duration,
    /// The nonces of states whose call was answered here, and until when each could be used.
    used: Mutex<HashMap<u64, u64>>,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// Why a round's state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The state is missing while answers were sent.
    Missing,
    /// Altered, or not sealed by this server's secret.
    Altered,
    /// Past its lifetime.
    Expired,
    /// Sealed for another call: another tool, other arguments, another caller.
    Foreign,
    /// Its call was answered already.
    Used,
}

impl Refused {
    /// The envelope that tells the model.
    pub(crate) fn into_error(self) -> ToolError {
        let why = match self {
            Refused::Missing => "it carries answers (inputResponses) but no requestState",
            Refused::Altered => "its requestState was altered, or is not this server's",
            Refused::Expired => "its requestState expired",
            Refused::Foreign => "its requestState was made for another call",
            Refused::Used => "its requestState was used already",
        };
        ToolError::round_refused(why)
    }
}

fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// What binds a state to its call: the tool, a digest of the arguments (their keys sorted at
/// every level, so a client that writes them in another order sends the same call), and the
/// verified caller.
pub(crate) fn binding(
    tool: &str,
    arguments: Option<&Map<String, Value>>,
    subject: Option<&str>,
) -> Vec<u8> {
    fn canonical(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                out.push(b'{');
                for key in keys {
                    canonical(&Value::String(key.clone()), out);
                    out.push(b':');
                    canonical(&map[key], out);
                    out.push(b',');
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for item in items {
                    canonical(item, out);
                    out.push(b',');
                }
                out.push(b']');
            }
            other => out.extend_from_slice(other.to_string().as_bytes()),
        }
    }
    let mut arguments_json = Vec::new();
    canonical(
        &Value::Object(arguments.cloned().unwrap_or_default()),
        &mut arguments_json,
    );
    let mut bound = Vec::new();
    for part in [
        tool.as_bytes(),
        &Sha256::digest(&arguments_json),
        subject.unwrap_or("").as_bytes(),
    ] {
        bound.extend_from_slice(&(part.len() as u64).to_be_bytes());
        bound.extend_from_slice(part);
    }
    bound
}

impl Rounds {
    /// Rounds sealed with `secret` (32 bytes or more), good for `ttl`.
    pub(crate) fn new(secret: &[u8], ttl: Duration) -> Result<Self, String> {
        let codec = RequestStateCodec::try_new(secret.to_vec()).map_err(|e| e.to_string())?;
        Ok(Rounds {
            codec,
            ttl,
            used: Mutex::default(),
        })
    }

    /// Rounds sealed with a secret of this process's own: a round answered by another replica
    /// is refused.
    pub(crate) fn of_process() -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut secret = Vec::with_capacity(64);
        for i in 0..8u64 {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(i ^ now_ms());
            secret.extend_from_slice(&hasher.finish().to_be_bytes());
        }
        Rounds::new(&secret, DEFAULT_TTL).expect("64 bytes is a long enough secret")
    }

    /// The state a round of the call bound by `binding` ends with.
    pub(crate) fn seal(&self, binding: &[u8]) -> String {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(now_ms());
        let state = State {
            nonce: hasher.finish(),
            bound: digest(binding),
        };
        let options = SealOptions::new().ttl(self.ttl);
        self.codec
            .seal_json_with(&state, &options)
            .unwrap_or_default()
    }

    /// Opens the state a retried call sent: its nonce, or why it is refused.
    pub(crate) fn open(&self, sealed: &str, binding: &[u8]) -> Result<u64, Refused> {
        let state: State = self.codec.open_json(sealed).map_err(|e| match e {
            RequestStateError::Expired => Refused::Expired,
            _ => Refused::Altered,
        })?;
        if state.bound != digest(binding) {
            return Err(Refused::Foreign);
        }
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        match used.contains_key(&state.nonce) {
            true => Err(Refused::Used),
            false => Ok(state.nonce),
        }
    }

    /// The call whose state held `nonce` was answered: the state cannot be used again here.
    pub(crate) fn spend(&self, nonce: u64) {
        let now = now_ms();
        let until = now.saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX));
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if used.len() >= MAX_USED {
            used.retain(|_, until| *until > now);
        }
        if used.len() < MAX_USED {
            used.insert(nonce, until);
        }
    }
}
