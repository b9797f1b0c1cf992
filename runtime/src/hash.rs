//! The hasher of the maps looked up on every call (a router's actions, a server's tools) and of
//! detection's maps and sets: eight bytes per step, each step one 64×64→128-bit multiply folded
//! to 64 bits, under two keys. A call hashes a few short strings (a name, schema locations,
//! paths): SipHash costs more there than the rest of the lookup.
//!
//! Paths are hashed under keys drawn once per process, so that a call cannot aim two of its
//! paths at one hash; names and schema locations, which the author chose and a call only looks
//! up, under fixed keys.

use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::OnceLock;

/// What a [`Fold`] starts from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FoldState {
    seed: u64,
    key: u64,
}

impl FoldState {
    /// Keys drawn once per process.
    pub(crate) fn random() -> Self {
        static KEYS: OnceLock<FoldState> = OnceLock::new();
        *KEYS.get_or_init(|| {
            let random = RandomState::new();
            FoldState {
                seed: random.hash_one(1_u64),
                key: random.hash_one(2_u64) | 1,
            }
        })
    }
}

impl Default for FoldState {
    /// Fixed keys (digits of π), for keys a caller does not choose.
    fn default() -> Self {
        FoldState {
            seed: 0x243f_6a88_85a3_08d3,
            key: 0x1319_8a2e_0370_7345,
        }
    }
}

impl BuildHasher for FoldState {
    type Hasher = Fold;

    fn build_hasher(&self) -> Fold {
        Fold {
            state: self.seed,
            key: self.key,
        }
    }
}

/// A hasher made by [`FoldState`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fold {
    state: u64,
    key: u64,
}

impl Fold {
    fn step(&mut self, word: u64) {
        let product = u128::from(self.state ^ word) * u128::from(self.key);
        self.state = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for Fold {
    fn finish(&self) -> u64 {
        self.state
    }

    fn write(&mut self, bytes: &[u8]) {
        // The length first: a short last word is padded with zeros.
        self.step(bytes.len() as u64);
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut buf = [0; 8];
            buf.copy_from_slice(word);
            self.step(u64::from_le_bytes(buf));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut buf = [0; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.step(u64::from_le_bytes(buf));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.step(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.step(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.step(n as u64);
    }

    fn write_isize(&mut self, n: isize) {
        self.step(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::FoldState;

    #[test]
    fn lengths_and_padding_tell_strings_apart() {
        for state in [FoldState::default(), FoldState::random()] {
            let hashes = [
                "",
                "\0",
                "a",
                "a\0",
                "abcdefgh",
                "abcdefgh\0",
                "/properties/a",
            ]
            .map(|s| state.hash_one(s));
            for (i, a) in hashes.iter().enumerate() {
                assert!(hashes[i + 1..].iter().all(|b| a != b), "{hashes:?}");
            }
        }
    }
}
