//! A log message as the host gets it (`Context::log`): its control characters escaped, its data
//! at most 16 KiB of JSON. A host shows log messages to people, in terminals too: a handler's
//! text, perhaps written from what a model or a remote service said, must not move the cursor,
//! clear the screen or fill the host's memory.

use serde_json::{Map, Value};

/// The most a log message's data takes as JSON; a longer message is cut, with a marker.
pub(crate) const MAX_LOG_BYTES: usize = 16 * 1024;

/// Room kept for the marker of a cut message (` [... 18446744073709551615 more bytes cut]`).
const MARKER_ROOM: usize = 48;

/// `data` as it may reach the host: every control character other than `\n` and `\t` (in
/// strings and keys alike) written as its escape, `\u001b`; and, when the result takes more
/// than [`MAX_LOG_BYTES`] as JSON, a string instead: the text (or the JSON of anything else)
/// cut to fit, with a marker saying how many bytes were cut.
pub(crate) fn bounded(mut data: Value) -> Value {
    escape_controls(&mut data);
    let size = match &data {
        Value::String(s) => 2 + s.chars().map(json_len).sum::<usize>(),
        other => other.to_string().len(),
    };
    if size <= MAX_LOG_BYTES {
        return data;
    }
    let text = match data {
        Value::String(s) => s,
        other => other.to_string(),
    };
    // The quotes, the marker, and each character as JSON writes it.
    let mut used = 2 + MARKER_ROOM;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        used += json_len(c);
        if used > MAX_LOG_BYTES {
            break;
        }
        end = at + c.len_utf8();
    }
    let mut cut = String::with_capacity(end + MARKER_ROOM);
    cut.push_str(&text[..end]);
    cut.push_str(&format!(" [... {} more bytes cut]", text.len() - end));
    Value::String(cut)
}

/// What `c` takes in a JSON string once escaped: two bytes for `"`, `\`, `\n` and `\t`.
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\t' => 2,
        c => c.len_utf8(),
    }
}

/// Whether `c` is shown escaped: a control character (C0, DEL, C1) other than `\n` and `\t`.
fn escaped(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn escape_controls(value: &mut Value) {
    match value {
        Value::String(s) => escape_in(s),
        Value::Array(items) => items.iter_mut().for_each(escape_controls),
        Value::Object(map) => {
            map.values_mut().for_each(escape_controls);
            if map.keys().any(|k| k.chars().any(escaped)) {
                let old = std::mem::take(map);
                *map = old
                    .into_iter()
                    .map(|(mut k, v)| {
                        escape_in(&mut k);
                        (k, v)
                    })
                    .collect::<Map<_, _>>();
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn escape_in(s: &mut String) {
    if !s.chars().any(escaped) {
        return;
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    *s = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn control_characters_are_escaped_but_newlines_and_tabs() {
        let data = json!({
            "line": "red \u{1b}[31mtext\u{1b}[0m\r\nnext\tcell\u{0}\u{7f}\u{85}",
            "k\u{7}ey": ["\u{8}", 1, null, {"deep": "\u{1b}]0;title\u{7}"}],
        });
        assert_eq!(
            bounded(data),
            json!({
                "line": "red \\u001b[31mtext\\u001b[0m\\u000d\nnext\tcell\\u0000\\u007f\\u0085",
                "k\\u0007ey": ["\\u0008", 1, null, {"deep": "\\u001b]0;title\\u0007"}],
            })
        );
        assert_eq!(bounded(json!("plain é 字")), json!("plain é 字"));
    }

    #[test]
    fn a_long_message_is_cut_to_16_kib_with_a_marker() {
        let at_most = json!("x".repeat(MAX_LOG_BYTES - 2));
        assert_eq!(bounded(at_most.clone()), at_most);
        for data in [
            json!("\"é\\\n".repeat(10_000)),
            json!("\u{1b}".repeat(10_000)),
            json!({"lines": vec!["a line"; 10_000]}),
        ] {
            let full = data.to_string().len();
            let sent = bounded(data);
            let json = sent.to_string();
            assert!(json.len() <= MAX_LOG_BYTES, "{}", json.len());
            assert!(
                json.len() > MAX_LOG_BYTES - MARKER_ROOM - 8,
                "{}",
                json.len()
            );
            let text = sent.as_str().expect("a string");
            assert!(
                text.ends_with(" more bytes cut]"),
                "{full}: {}",
                &text[text.len() - 40..]
            );
            assert!(!text.chars().any(escaped));
        }
        let sent = bounded(json!("y".repeat(100_000)));
        let kept = sent.as_str().expect("a string");
        let shown = kept.trim_end_matches(|c| c != '[').len() - 2;
        assert_eq!(
            &kept[shown..],
            format!(" [... {} more bytes cut]", 100_000 - shown)
        );
    }
}
