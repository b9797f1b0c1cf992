//! The available actions of an envelope, and the `<available_actions>` block (ERRORS.md §3).

use std::sync::Arc;

use super::escape::text;
use super::json;
use super::text::Text;

/// The available actions of an envelope: its own list, or a list shared by every envelope of
/// a router (its tool's actions), with the XML of the list written once.
#[derive(Clone)]
pub(crate) enum Actions {
    Listed(Vec<Text>),
    Shared(Arc<ActionList>),
}

impl Actions {
    pub(crate) fn names(&self) -> &[Text] {
        match self {
            Actions::Listed(names) => names,
            Actions::Shared(list) => &list.names,
        }
    }

    /// The list, made its own before it changes.
    pub(super) fn to_mut(&mut self) -> &mut Vec<Text> {
        if let Actions::Shared(list) = self {
            *self = Actions::Listed(list.names.clone());
        }
        match self {
            Actions::Listed(names) => names,
            Actions::Shared(_) => unreachable!("made listed just above"),
        }
    }
}

impl PartialEq for Actions {
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names()
    }
}

impl Eq for Actions {}

/// A list of actions with its `<available_actions>` block rendered once (and, once a first
/// envelope listing it is written as JSON, the block and the names as JSON too).
#[derive(Debug)]
pub(crate) struct ActionList {
    names: Vec<Text>,
    pub(crate) block: String,
    /// The block escaped as inside a JSON string, and the names as a JSON array.
    json: std::sync::OnceLock<(Vec<u8>, Vec<u8>)>,
}

impl ActionList {
    /// The names (empty ones dropped, duplicates once, as `.actions(..)` does) and their block.
    pub(crate) fn new(names: impl IntoIterator<Item = Text>) -> Self {
        let mut unique: Vec<Text> = Vec::new();
        for name in names {
            if !name.is_empty() && !unique.contains(&name) {
                unique.push(name);
            }
        }
        let block = actions_block(&unique);
        ActionList {
            names: unique,
            block,
            json: std::sync::OnceLock::new(),
        }
    }

    pub(crate) fn names(&self) -> &[Text] {
        &self.names
    }

    /// The block escaped as inside a JSON string (no quotes), and the names as a JSON array.
    pub(crate) fn json(&self) -> (&[u8], &[u8]) {
        let (block, names) = self.json.get_or_init(|| {
            let mut block = Vec::with_capacity(self.block.len() + 16);
            json::string(&mut block, &self.block);
            let block = block[1..block.len() - 1].to_vec();
            let mut names = vec![b'['];
            for (i, name) in self.names.iter().enumerate() {
                if i > 0 {
                    names.push(b',');
                }
                json::string(&mut names, name);
            }
            names.push(b']');
            (block, names)
        });
        (block, names)
    }
}

/// The `<available_actions>` block (nothing for no actions).
pub(super) fn write_actions(out: &mut String, names: &[Text]) {
    if names.is_empty() {
        return;
    }
    out.push_str("<available_actions>\n");
    for action in names {
        out.push_str("  <action>");
        text(out, action);
        out.push_str("</action>\n");
    }
    out.push_str("</available_actions>\n");
}

/// The block of a list of actions, rendered once for a router.
pub(crate) fn actions_block(names: &[Text]) -> String {
    let mut out = String::with_capacity(names.iter().map(|a| a.len() + 20).sum::<usize>() + 44);
    write_actions(&mut out, names);
    out
}
