//! The rounds of a 2026-07-28 call that asks its client (SEP-2322): the `requestState` a round
//! ends with, sealed with rmcp's `RequestStateCodec` (HMAC-SHA-256 under the server's secret)
//! and bound to the call (the tool called, a digest of its arguments, the verified caller) and
//! to a lifetime, so that any replica sharing the secret can trust it on the next round without
//! a shared store; and its refusal when it was altered, expired, made for another call, or
//! already used here.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{InputResponses, RequestStateCodec, RequestStateError, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::ToolError;

/// How long a round's `requestState` is good for by default.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);

/// The most states remembered as used, per process.
const MAX_USED: usize = 100_000;

/// What a sealed state holds: a nonce, for telling one round from another; a digest of what
/// binds it to its call (read back to tell a state made for another call from an altered one,
/// which the tag alone cannot); the answers of the rounds before, and the keys this round
/// asked. The client sends back only this round's answers (SEP-2322: the state is the server's
/// memory between rounds).
#[derive(Serialize, Deserialize)]
struct State {
    nonce: u64,
    bound: String,
    #[serde(default, skip_serializing_if = "InputResponses::is_empty")]
    answers: InputResponses,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    asked: Vec<String>,
}

/// A retried call's state, opened.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) nonce: u64,
    /// The answers of every round so far: those the state kept, and those the retry carries
    /// for what the last round asked (an answer to anything else is ignored).
    pub(crate) answers: InputResponses,
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
    pub(crate) fn of_process(ttl: Duration) -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut secret = Vec::with_capacity(64);
        for i in 0..8u64 {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(i ^ now_ms());
            secret.extend_from_slice(&hasher.finish().to_be_bytes());
        }
        Rounds::new(&secret, ttl).expect("64 bytes is a long enough secret")
    }

    /// The state a round of the call bound by `binding` ends with, keeping the `answers` given
    /// so far and the keys the round `asked`.
    pub(crate) fn seal(
        &self,
        binding: &[u8],
        answers: &InputResponses,
        asked: Vec<String>,
    ) -> String {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(now_ms());
        let state = State {
            nonce: hasher.finish(),
            bound: digest(binding),
            answers: answers.clone(),
            asked,
        };
        let options = SealOptions::new().ttl(self.ttl);
        self.codec
            .seal_json_with(&state, &options)
            .unwrap_or_default()
    }

    /// Opens the state a retried call sent with `responses`: its nonce and the answers so far,
    /// or why it is refused.
    pub(crate) fn open(
        &self,
        sealed: &str,
        binding: &[u8],
        mut responses: InputResponses,
    ) -> Result<Opened, Refused> {
        let state: State = self.codec.open_json(sealed).map_err(|e| match e {
            RequestStateError::Expired => Refused::Expired,
            _ => Refused::Altered,
        })?;
        if state.bound != digest(binding) {
            return Err(Refused::Foreign);
        }
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if used.contains_key(&state.nonce) {
            return Err(Refused::Used);
        }
        let mut answers = state.answers;
        for key in state.asked {
            if let Some(answer) = responses.remove(&key) {
                answers.insert(key, answer);
            }
        }
        Ok(Opened {
            nonce: state.nonce,
            answers,
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn responses(pairs: &[(&str, Value)]) -> InputResponses {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn a_state_keeps_the_answers_of_earlier_rounds_and_only_those_asked() {
        let rounds = Rounds::new(&[1; 32], DEFAULT_TTL).unwrap();
        let arguments = json!({"b": [1, {"y": 2, "x": 1}], "a": "z"});
        let bound = binding("notes.delete", arguments.as_object(), Some("ada"));
        let first = rounds.seal(&bound, &InputResponses::new(), vec!["elicitation-1".into()]);
        let answered = responses(&[
            ("elicitation-1", json!({"action": "accept"})),
            ("sampling-9", json!("made up")),
        ]);
        let opened = rounds.open(&first, &bound, answered).unwrap();
        assert_eq!(
            opened.answers,
            responses(&[("elicitation-1", json!({"action": "accept"}))])
        );
        let second = rounds.seal(&bound, &opened.answers, vec!["sampling-2".into()]);
        let more = responses(&[("sampling-2", json!({"model": "m"}))]);
        let opened = rounds.open(&second, &bound, more).unwrap();
        assert_eq!(opened.answers.len(), 2);
        // The same arguments written in another order are the same call.
        let reordered = json!({"a": "z", "b": [1, {"x": 1, "y": 2}]});
        let same = binding("notes.delete", reordered.as_object(), Some("ada"));
        assert!(rounds.open(&second, &same, InputResponses::new()).is_ok());
    }

    #[test]
    fn a_state_is_refused_when_altered_foreign_used_or_expired() {
        let rounds = Rounds::new(&[1; 32], DEFAULT_TTL).unwrap();
        let bound = binding("notes.delete", None, Some("ada"));
        let state = rounds.seal(&bound, &InputResponses::new(), Vec::new());
        let none = InputResponses::new;
        let refusal = |state: &str, bound: &[u8]| rounds.open(state, bound, none()).unwrap_err();
        let mut altered = state.clone();
        altered.insert(altered.len() / 2, 'x');
        assert_eq!(refusal(&altered, &bound), Refused::Altered);
        let other_secret = Rounds::new(&[2; 32], DEFAULT_TTL).unwrap();
        let theirs = other_secret.seal(&bound, &InputResponses::new(), Vec::new());
        assert_eq!(refusal(&theirs, &bound), Refused::Altered);
        for foreign in [
            binding("notes.delete", None, Some("bob")),
            binding(
                "notes.delete",
                json!({"note": "a"}).as_object(),
                Some("ada"),
            ),
            binding("notes.keep", None, Some("ada")),
        ] {
            assert_eq!(refusal(&state, &foreign), Refused::Foreign);
        }
        let nonce = rounds.open(&state, &bound, none()).unwrap().nonce;
        rounds.spend(nonce);
        assert_eq!(refusal(&state, &bound), Refused::Used);

        // Good for 1 ms of the wall clock every replica reads.
        let brief = Rounds::new(&[1; 32], Duration::from_millis(1)).unwrap();
        let state = brief.seal(&bound, &InputResponses::new(), Vec::new());
        let sealed = now_ms();
        while now_ms() <= sealed + 2 {
            std::thread::yield_now();
        }
        let expired = brief.open(&state, &bound, none()).unwrap_err();
        assert_eq!(expired, Refused::Expired);
    }
}
