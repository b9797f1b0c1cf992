//! The names a task store writes in Redis, none of which shows what a caller sent or who the
//! caller is:
//!
//! - a task is named by the first 128 bits of the SHA-256 of its id (`{prefix}:task:{<hash>}`,
//!   its questions `…:q`, its answers `…:a`: one hash tag, one slot of a cluster). The id is
//!   128 random bits minted by the server and never stored, so whoever reads Redis can neither
//!   read a task's id back nor reach the task through a server;
//! - its owner is the SHA-256 of the id and the caller's key together: testing a guess of the
//!   caller (an email, a subject) needs the id, which Redis does not hold;
//! - a caller's count of tasks (`{prefix}:tasks:{counts}:caller:<hash>`) is named by the
//!   HMAC-SHA-256 of its key under the operator's secret, so it cannot be tested against guesses
//!   either; the anonymous caller's is `…:caller:anonymous`, the store's `…:all` (every count
//!   under one hash tag, so one script keeps both caps).

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};

/// The Redis names of one task.
pub(super) struct TaskKeys {
    /// The task's hash, as its keys and the change channel name it.
    pub(super) hash: String,
    pub(super) main: String,
    pub(super) questions: String,
    pub(super) answers: String,
}

impl TaskKeys {
    /// The names of the task `id` under `prefix`.
    pub(super) fn new(prefix: &str, id: &str) -> Self {
        let hash = hex128(
            &Sha256::new()
                .chain_update(b"task\0")
                .chain_update(id)
                .finalize(),
        );
        let main = format!("{prefix}:task:{{{hash}}}");
        TaskKeys {
            questions: format!("{main}:q"),
            answers: format!("{main}:a"),
            main,
            hash,
        }
    }
}

/// The owner of task `id` as stored: the caller's key bound to the id, `-` for the anonymous
/// caller bound to it too (so no two tasks store the same owner).
pub(super) fn owner(id: &str, caller: Option<&str>) -> String {
    let digest = Sha256::new()
        .chain_update(b"owner\0")
        .chain_update(id)
        .chain_update([u8::from(caller.is_some())])
        .chain_update(caller.unwrap_or_default())
        .finalize();
    hex128(&digest)
}

/// The key of `caller`'s count of tasks; `None` for a caller's key without a `secret` to hash
/// it under (a plain hash could be tested against guesses).
pub(super) fn caller_count(
    prefix: &str,
    secret: Option<&[u8]>,
    caller: Option<&str>,
) -> Option<String> {
    let Some(caller) = caller else {
        return Some(format!("{prefix}:tasks:{{counts}}:caller:anonymous"));
    };
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(secret?).expect("HMAC takes any key");
    mac.update(b"tasks\0");
    mac.update(caller.as_bytes());
    Some(format!(
        "{prefix}:tasks:{{counts}}:caller:{}",
        hex128(&mac.finalize().into_bytes())
    ))
}

/// The key of the store's count of tasks, beside the callers' (the same hash tag).
pub(super) fn store_count(prefix: &str) -> String {
    format!("{prefix}:tasks:{{counts}}:all")
}

/// The first 128 bits of a digest, in hex.
fn hex128(digest: &[u8]) -> String {
    crate::hex::lower(&digest[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_name_shows_the_id_or_the_caller() {
        let keys = TaskKeys::new("fleet", "5f0c2a91d3b84e7f9a6b1c0d2e3f4a5b");
        assert!(keys.main.starts_with("fleet:task:{") && keys.main.ends_with('}'));
        assert_eq!(keys.questions, format!("{}:q", keys.main));
        assert!(!keys.main.contains("5f0c2a91"));
        let alice = owner("5f0c", Some("alice@example.com"));
        assert_ne!(
            alice,
            owner("5f0d", Some("alice@example.com")),
            "bound to the id"
        );
        assert_ne!(
            owner("5f0c", None),
            owner("5f0c", Some("")),
            "anonymous is no key"
        );
        let secret = b"0123456789abcdef0123456789abcdef".as_slice();
        let count = caller_count("fleet", Some(secret), Some("alice@example.com")).unwrap();
        assert!(!count.contains("alice"));
        assert_eq!(caller_count("fleet", None, Some("alice@example.com")), None);
        assert_eq!(
            caller_count("fleet", None, None).as_deref(),
            Some("fleet:tasks:{counts}:caller:anonymous")
        );
    }
}
