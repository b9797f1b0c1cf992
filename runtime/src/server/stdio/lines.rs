//! Newline-delimited input, a line at a time, with a limit on a line's length: the part of a
//! longer line past the limit is never held, only scanned for the request's id.

use rmcp::model::RequestId;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One line of input.
pub(super) enum Line {
    /// A line within the limit, without its LF.
    Whole(Vec<u8>),
    /// A line over the limit, of `len` bytes: its top-level `id` when one could be read.
    Oversized { len: usize, id: Option<RequestId> },
}

/// Reads lines of at most `max` bytes; cancel-safe (a line read so far survives a dropped read).
pub(super) struct Lines<R> {
    read: BufReader<R>,
    max: usize,
    /// The line read so far.
    line: Vec<u8>,
    /// Set once the line in progress is over the limit.
    oversized: Option<Oversized>,
}

struct Oversized {
    len: usize,
    scan: IdScan,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    pub(super) fn new(read: R, max: usize) -> Self {
        Lines {
            read: BufReader::new(read),
            max,
            line: Vec::new(),
            oversized: None,
        }
    }

    /// The next line, or `None` at the end of the input (a last line without LF is dropped, as
    /// rmcp does: the writer was cut off mid-message).
    pub(super) async fn next(&mut self) -> Option<Line> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(e) => {
                    tracing::error!("stdio: reading failed: {e}");
                    return None;
                }
            };
            if available.is_empty() {
                return None;
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let content = &available[..newline.unwrap_or(available.len())];
            match &mut self.oversized {
                Some(over) => {
                    over.len += content.len();
                    over.scan.feed(content);
                }
                None if self.line.len() + content.len() > self.max => {
                    let mut scan = IdScan::default();
                    scan.feed(&self.line);
                    scan.feed(content);
                    self.oversized = Some(Oversized {
                        len: self.line.len() + content.len(),
                        scan,
                    });
                    self.line = Vec::new();
                }
                None => self.line.extend_from_slice(content),
            }
            // No await between reading the buffer and consuming it: cancellation loses nothing.
            self.read.consume(take);
            if newline.is_some() {
                return Some(match self.oversized.take() {
                    Some(over) => Line::Oversized {
                        len: over.len,
                        id: over.scan.id(),
                    },
                    None => Line::Whole(std::mem::take(&mut self.line)),
                });
            }
        }
    }
}

/// The longest id text kept while scanning an oversized line.
const MAX_ID_TEXT: usize = 256;

/// Finds the value of the top-level `"id"` key of a JSON object fed to it in pieces, holding
/// nothing but that value's text.
#[derive(Default)]
struct IdScan {
    /// Containers open around the current byte; the message object is depth 1.
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    /// The key being read at depth 1 (only its first bytes matter).
    key: Vec<u8>,
    /// The text of the `id` value being read.
    capture: Option<Vec<u8>>,
    /// The `id` value's text, once complete.
    found: Option<Vec<u8>>,
    /// Not an object, or an id too long to keep.
    hopeless: bool,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.hopeless || self.found.is_some() {
                return;
            }
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        let key_at_top = self.depth == 1 && self.expect_key;
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            if key_at_top {
                if self.key.len() < 4 {
                    self.key.push(b);
                }
            } else {
                self.keep(b);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if key_at_top {
                    self.key.clear();
                } else {
                    self.keep(b);
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && b == b'[' {
                    self.hopeless = true;
                }
                self.keep(b);
                self.depth += 1;
                self.expect_key = self.depth == 1;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.found = self.capture.take().or(self.found.take());
                } else {
                    self.keep(b);
                }
            }
            b':' if key_at_top => {
                self.expect_key = false;
                // The key's bytes end with its closing quote.
                if self.key == b"id\"" {
                    self.capture = Some(Vec::new());
                }
            }
            b',' if self.depth == 1 => {
                if let Some(id) = self.capture.take() {
                    self.found = Some(id);
                }
                self.expect_key = true;
            }
            b' ' | b'\t' | b'\r' => {}
            _ if self.depth == 0 => self.hopeless = true,
            _ => self.keep(b),
        }
    }

    /// Keeps a byte of the id's value.
    fn keep(&mut self, b: u8) {
        if let Some(capture) = &mut self.capture {
            if capture.len() == MAX_ID_TEXT {
                self.hopeless = true;
            }
            capture.push(b);
        }
    }

    fn id(self) -> Option<RequestId> {
        if self.hopeless {
            return None;
        }
        serde_json::from_slice(&self.found?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(pieces: &[&str]) -> Option<String> {
        let mut scan = IdScan::default();
        for piece in pieces {
            scan.feed(piece.as_bytes());
        }
        scan.id().map(|id| id.to_string())
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        let params = r#""params":{"id":"inner","arguments":{"a":[1,{"id":2}],"s":"\"id\":3,"}}"#;
        assert_eq!(
            id_of(&[r#"{"jsonrpc":"2.0","id":7,"#, params, "}"]),
            Some("7".into())
        );
        assert_eq!(
            id_of(&[r#"{"jsonrpc":"2.0","#, params, r#","id" : "a-1" }"#]),
            Some("a-1".into())
        );
        // Cut anywhere, even inside the id.
        assert_eq!(
            id_of(&[r#"{"method":"x","i"#, r#"d":12"#, "34}"]),
            Some("1234".into())
        );
    }

    #[test]
    fn no_id_when_it_cannot_be_read() {
        assert_eq!(
            id_of(&[r#"{"jsonrpc":"2.0","method":"x","params":{"id":1}}"#]),
            None
        );
        assert_eq!(id_of(&[r#"[{"id":1}]"#]), None);
        assert_eq!(id_of(&[r#"{"id":{"nested":1}}"#]), None);
        let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(1000));
        assert_eq!(id_of(&[&long]), None);
        // The object never ends: the id was read but the message is cut.
        assert_eq!(id_of(&[r#"{"id":5,"params":{"#]), Some("5".into()));
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_never_held() {
        let input = format!(
            "{}\n{{\"id\":9,\"params\":{}}}\nnext\n",
            "a".repeat(10),
            "[0,".repeat(100) + "0" + &"]".repeat(0)
        );
        let mut lines = Lines::new(input.as_bytes(), 64);
        assert!(matches!(lines.next().await, Some(Line::Whole(l)) if l == b"aaaaaaaaaa"));
        match lines.next().await {
            Some(Line::Oversized { len, id }) => {
                assert_eq!(len, input.lines().nth(1).unwrap().len());
                assert_eq!(id, Some(RequestId::Number(9)));
                assert!(lines.line.capacity() <= 64 + 10);
            }
            _ => panic!("expected an oversized line"),
        }
        assert!(matches!(lines.next().await, Some(Line::Whole(l)) if l == b"next"));
        assert!(lines.next().await.is_none());
    }
}
