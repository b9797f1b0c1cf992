//! What to do with one message as it came in (a line of stdio, an HTTP body): the message rmcp
//! reads, or the answer rmcp would not give.
//!
//! rmcp drops every line serde_json reports as a syntax error (answering garbage invites
//! error storms, rust-sdk#938). Some valid requests fall into that hole
//! (`tests/hostile/corpus.jsonl` has them); they are answered here instead:
//!
//! - a lone surrogate escape (`"\ud800"`), which `JSON.stringify` and Python's `json.dumps`
//!   write for a string cut inside a surrogate pair, is read as U+FFFD, the character the
//!   envelope puts in place of any it cannot carry (ERRORS.md §2);
//! - nesting deeper than serde_json's 128 levels, or a number beyond `f64`, is answered -32600
//!   Invalid Request, with the request's id when it can be read.
//!
//! Over stdio, lines that are not JSON, and notifications, stay unanswered, as in rmcp; over
//! HTTP every request gets a response, so the transport answers those by [`Unread`]. (A
//! standard method whose params do not decode is answered -32602 by the server itself, on every
//! transport.)

// Without a transport, nothing here is used.
#![cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]

use std::borrow::Cow;

use rmcp::RoleServer;
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};

use super::methods::{MCP_REQUESTS, Route, not_found, route};

/// What to do with one line.
pub(crate) enum Read {
    Message(RxJsonRpcMessage<RoleServer>),
    Answer(TxJsonRpcMessage<RoleServer>),
    /// Nothing a JSON-RPC peer answers, and why (stdio needs no why: it answers none).
    Drop(#[cfg_attr(not(feature = "http"), allow(dead_code))] Unread),
}

/// Why a message gets no JSON-RPC answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Nothing but whitespace.
    Blank,
    /// Not JSON (or cut short).
    NotJson,
    /// A JSON object without an id that is no notification rmcp reads.
    Notification,
}

pub(crate) fn read(line: &[u8]) -> Read {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Read::Drop(Unread::Blank);
    }
    let repaired = without_lone_surrogates(line);
    let line = repaired.as_deref().unwrap_or(line);
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        // A request rmcp reads that the table of requests does not route: no one serves it.
        Ok(JsonRpcMessage::Request(request)) if route(&request.request) == Route::Unknown => {
            return answer(not_found(request.request.method()), Some(request.id));
        }
        Ok(message) => return Read::Message(message),
        Err(error) => error,
    };
    let syntax = error.is_syntax() || error.is_eof();
    match scan_object(line, true) {
        // A valid request that serde_json cannot hold (too deep, a number beyond f64).
        Some(Scanned {
            has_id: true, id, ..
        }) if syntax => answer(ErrorData::invalid_request(unreadable(&error), None), id),
        // Text that is not JSON, as in rmcp, and notifications are never answered.
        _ if syntax => Read::Drop(Unread::NotJson),
        Some(Scanned { has_id: false, .. }) => Read::Drop(Unread::Notification),
        // A request rmcp cannot read: answered with its id, in the project's words.
        Some(scanned) => {
            let error = unread_request(&scanned);
            answer(error, scanned.id)
        }
        // JSON that is no message, as in rmcp: Invalid Request, without an id.
        None => answer(
            ErrorData::invalid_request("Invalid request: not a JSON-RPC message", None),
            None,
        ),
    }
}

/// Why a JSON-RPC request with an id could not be read (JSON-RPC 2.0 §4, §5.1; MCP's params
/// are objects).
fn unread_request(scanned: &Scanned<'_>) -> ErrorData {
    let invalid = |why: &str| ErrorData::invalid_request(format!("Invalid request: {why}"), None);
    if scanned.repeated {
        return invalid("a member of the message is given twice");
    }
    if scanned.id.is_none() {
        return invalid("an id is a string or an integer");
    }
    let Some(method) = scanned.method.as_deref().filter(|_| scanned.version) else {
        return invalid("a request needs \"jsonrpc\": \"2.0\" and a \"method\" string");
    };
    match scanned.params {
        Some(Params::Scalar) => invalid("\"params\" must be an object or an array"),
        _ if !MCP_REQUESTS.contains(&method) => not_found(method),
        Some(Params::Array) => ErrorData::invalid_params(
            format!("Invalid params: {method} takes its params as an object"),
            None,
        ),
        Some(Params::Object) => {
            ErrorData::invalid_params(format!("Invalid params for {method}"), None)
        }
        Some(Params::Null) | None => invalid("the message cannot be read"),
    }
}

/// A valid request serde_json cannot hold, said in the project's words (no serde wording).
fn unreadable(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if text.starts_with("recursion limit exceeded") {
        "Invalid request: the message nests deeper than the 128 levels this server reads".into()
    } else if text.starts_with("number out of range") {
        "Invalid request: a number in the message is beyond what a double holds".into()
    } else {
        "Invalid request: the message cannot be read".into()
    }
}

fn answer(error: ErrorData, id: Option<RequestId>) -> Read {
    Read::Answer(JsonRpcMessage::error(error, id))
}

/// `line` with every escaped UTF-16 surrogate that is not half of a pair written `\ufffd`;
/// `None` when there is none.
pub(crate) fn without_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    let unit = |at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    // Only a backslash begins an escape: the text between two is skipped whole.
    while let Some(found) = line.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        i += found;
        let (len, lone) = match unit(i) {
            Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => (12, false),
            Some(0xD800..=0xDFFF) => (6, true),
            Some(_) => (6, false),
            None => (2, false),
        };
        if lone {
            let out = out.get_or_insert_with(|| Vec::with_capacity(line.len()));
            out.extend_from_slice(&line[copied..i]);
            out.extend_from_slice(b"\\ufffd");
            copied = i + len;
        }
        i += len;
    }
    let mut out = out?;
    out.extend_from_slice(&line[copied..]);
    Some(out)
}

/// The method and id of the request `body` is, read from its top level without parsing its
/// params (for the HTTP body step, which leaves the parse to rmcp): `None` unless it is one
/// JSON object with `"jsonrpc": "2.0"`, an id as rmcp reads one, and a method, none of its
/// members given twice or named with an escape (a name rmcp might read as one of these).
/// Whenever rmcp reads `body` as a request, it is this one (held by
/// `tests::the_top_level_is_the_request_rmcp_reads`); any depth and any number pass here, and
/// rmcp's own parse judges them.
#[cfg(feature = "http")]
pub(crate) fn top(body: &[u8]) -> Option<(Cow<'_, str>, RequestId)> {
    let scanned = scan_object(body, false)?;
    let plain = scanned.version && !scanned.repeated && !scanned.escaped;
    plain.then_some((scanned.method?, scanned.id?))
}

/// A line that is one JSON object: whether it has a top-level `id`, that id if rmcp could read
/// it, its `method` when a string, and what its `params` are.
struct Scanned<'a> {
    has_id: bool,
    id: Option<RequestId>,
    /// `"jsonrpc": "2.0"`.
    version: bool,
    /// A member given twice.
    repeated: bool,
    /// A member named with an escape.
    escaped: bool,
    method: Option<Cow<'a, str>>,
    params: Option<Params>,
}

/// The kind of a request's `params`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Params {
    Object,
    Array,
    Null,
    /// A string, a number or a boolean: never valid JSON-RPC.
    Scalar,
}

/// Scans `line` as one JSON object without recursion, so that any depth and any number is
/// accepted; `None` when it is not one valid JSON object. Unless `checked`, its members'
/// values are passed over unchecked (the top level alone is read).
fn scan_object(line: &[u8], checked: bool) -> Option<Scanned<'_>> {
    if checked {
        std::str::from_utf8(line).ok()?;
    }
    let mut scan = Scanner { s: line, at: 0 };
    let mut scanned = Scanned {
        has_id: false,
        id: None,
        version: false,
        repeated: false,
        escaped: false,
        method: None,
        params: None,
    };
    scan.expect(b'{')?;
    if !scan.eat(b'}') {
        loop {
            let key = scan.string()?;
            scanned.escaped |= key.contains(&b'\\');
            scan.expect(b':')?;
            let start = scan.skip_ws();
            match checked {
                true => scan.value()?,
                false => scan.skip()?,
            }
            let value = &line[start..scan.at];
            let repeated = |seen: bool| scanned.repeated | seen;
            match key {
                // An id given twice is no id the answer can carry.
                b"\"id\"" if scanned.has_id => {
                    scanned.repeated = true;
                    scanned.id = None;
                }
                b"\"id\"" => {
                    scanned.has_id = true;
                    scanned.id = plain_id(value).or_else(|| serde_json::from_slice(value).ok());
                }
                b"\"jsonrpc\"" => scanned.version = value == b"\"2.0\"",
                b"\"method\"" => {
                    scanned.repeated = repeated(scanned.method.is_some());
                    scanned.method = match plain_string(value) {
                        Some(method) => Some(Cow::Borrowed(method)),
                        None => serde_json::from_slice::<String>(value).ok().map(Cow::Owned),
                    };
                }
                b"\"params\"" => {
                    scanned.repeated = repeated(scanned.params.is_some());
                    scanned.params = Some(match value.first() {
                        Some(b'{') => Params::Object,
                        Some(b'[') => Params::Array,
                        Some(b'n') => Params::Null,
                        _ => Params::Scalar,
                    })
                }
                _ => {}
            }
            if !scan.eat(b',') {
                scan.expect(b'}')?;
                break;
            }
        }
    }
    (scan.skip_ws() == line.len()).then_some(scanned)
}

/// The id a JSON value of the usual forms is, read as rmcp reads it (`NumberOrString`, through
/// a `Value`) without building the `Value`: a decimal integer of at most 18 digits, or a string
/// without escapes. `None` for any other form, which serde reads.
fn plain_id(value: &[u8]) -> Option<RequestId> {
    let digits = value.strip_prefix(b"-").unwrap_or(value);
    let integer = matches!(digits, [b'1'..=b'9', ..] if digits.len() <= 18) || value == b"0";
    if integer && digits.iter().all(u8::is_ascii_digit) {
        let number = std::str::from_utf8(value).ok()?.parse().ok()?;
        return Some(RequestId::Number(number));
    }
    plain_string(value).map(|id| RequestId::String(id.into()))
}

/// The text of a JSON string without escapes or control characters, as serde reads it; `None`
/// for any other value.
fn plain_string(value: &[u8]) -> Option<&str> {
    let text = value.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let plain = text.iter().all(|&b| b >= 0x20 && b != b'\\' && b != b'"');
    plain.then(|| std::str::from_utf8(text).ok()).flatten()
}

/// A cursor over JSON text that checks its grammar; every step skips leading whitespace.
struct Scanner<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn skip_ws(&mut self) -> usize {
        while matches!(self.s.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
        self.at
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_ws();
        let found = self.s.get(self.at) == Some(&byte);
        self.at += usize::from(found);
        found
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    /// One value, of any depth: open containers are kept on a stack, not the call stack.
    fn value(&mut self) -> Option<()> {
        let mut open = Vec::new();
        loop {
            self.skip_ws();
            match *self.s.get(self.at)? {
                b'[' | b'{' => {
                    let close = if self.s[self.at] == b'[' { b']' } else { b'}' };
                    self.at += 1;
                    if self.eat(close) {
                        // An empty container is a complete value.
                    } else {
                        if close == b'}' {
                            self.string()?;
                            self.expect(b':')?;
                        }
                        open.push(close);
                        continue;
                    }
                }
                b'"' => {
                    self.string()?;
                }
                _ => self.scalar()?,
            }
            // A value ended: close what it completes, then go on with the next one.
            loop {
                let Some(&close) = open.last() else {
                    return Some(());
                };
                if self.eat(b',') {
                    if close == b'}' {
                        self.string()?;
                        self.expect(b':')?;
                    }
                    break;
                }
                self.expect(close)?;
                open.pop();
            }
        }
    }

    /// One value passed over without checking its grammar (nor its strings' characters):
    /// where valid JSON ends, it ends.
    fn skip(&mut self) -> Option<()> {
        let mut depth = 0_usize;
        loop {
            match *self.s.get(self.at)? {
                b'"' => loop {
                    // Past the string, an escape's character never taken for its end.
                    self.at += 1;
                    let rest = self.s.get(self.at..)?;
                    self.at += memchr::memchr2(b'"', b'\\', rest)?;
                    if self.s[self.at] == b'"' {
                        self.at += 1;
                        break;
                    }
                    self.at += 1;
                },
                b'[' | b'{' => {
                    depth += 1;
                    self.at += 1;
                    continue;
                }
                b']' | b'}' if depth > 0 => {
                    depth -= 1;
                    self.at += 1;
                }
                b',' | b']' | b'}' if depth == 0 => return Some(()),
                _ => {
                    self.at += 1;
                    continue;
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// A string, escapes checked (any `\uXXXX` goes: serde_json judges surrogates); returns it
    /// with its quotes.
    fn string(&mut self) -> Option<&'a [u8]> {
        self.skip_ws();
        let start = self.at;
        if self.s.get(self.at) != Some(&b'"') {
            return None;
        }
        self.at += 1;
        loop {
            match *self.s.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(&self.s[start..self.at]);
                }
                b'\\' => {
                    let escape = *self.s.get(self.at + 1)?;
                    self.at += match escape {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        b'u' => {
                            let hex = self.s.get(self.at + 2..self.at + 6)?;
                            hex.iter().all(u8::is_ascii_hexdigit).then_some(6)?
                        }
                        _ => return None,
                    };
                }
                0..=0x1F => return None,
                _ => self.at += 1,
            }
        }
    }

    /// A number (of any magnitude), `true`, `false` or `null`.
    fn scalar(&mut self) -> Option<()> {
        for literal in [&b"true"[..], b"false", b"null"] {
            if self.s[self.at..].starts_with(literal) {
                self.at += literal.len();
                return Some(());
            }
        }
        let digits = |scan: &mut Self| {
            let start = scan.at;
            while scan.s.get(scan.at).is_some_and(u8::is_ascii_digit) {
                scan.at += 1;
            }
            (scan.at > start).then_some(())
        };
        self.at += usize::from(self.s.get(self.at) == Some(&b'-'));
        if self.s.get(self.at) == Some(&b'0') {
            self.at += 1;
        } else {
            digits(self)?;
        }
        if self.s.get(self.at) == Some(&b'.') {
            self.at += 1;
            digits(self)?;
        }
        if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            self.at += usize::from(matches!(self.s.get(self.at), Some(b'+' | b'-')));
            digits(self)?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(line: &str) -> Option<serde_json::Value> {
        match read(line.as_bytes()) {
            Read::Answer(answer) => Some(serde_json::to_value(answer).unwrap()),
            _ => None,
        }
    }

    /// The top level of `body`, owned.
    #[cfg(feature = "http")]
    fn top_owned(body: &str) -> Option<(String, RequestId)> {
        top(body.as_bytes()).map(|(method, id)| (method.into_owned(), id))
    }

    /// What rmcp reads `body` as: the method and id of a request, or nothing.
    #[cfg(feature = "http")]
    fn rmcp_reads(body: &str) -> Option<(String, RequestId)> {
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(body.as_bytes()) {
            Ok(JsonRpcMessage::Request(request)) => {
                Some((request.request.method().to_owned(), request.id))
            }
            _ => None,
        }
    }

    /// The usual ids and methods are read without serde exactly as serde reads them; every
    /// other form is left to serde.
    #[test]
    fn plain_ids_and_strings_are_read_as_serde_reads_them() {
        let forms: [&[u8]; 22] = [
            b"0",
            b"7",
            b"-3",
            b"-0",
            b"007",
            b"123456789012345678",
            b"-123456789012345678",
            b"1234567890123456789",
            b"9223372036854775808",
            b"1.0",
            b"1e2",
            br#""""#,
            br#""a""#,
            "\"\u{e9}\"".as_bytes(),
            br#""a\"b""#,
            br#""\u0041""#,
            b"\"\t\"",
            b"\"\x01\"",
            b"true",
            b"null",
            b"\"\xff\"",
            b"\"a",
        ];
        for form in forms {
            let shown = String::from_utf8_lossy(form);
            let served: Option<RequestId> = serde_json::from_slice(form).ok();
            if let Some(id) = plain_id(form) {
                assert_eq!(Some(id), served, "{shown}");
            }
            let text: Option<String> = serde_json::from_slice(form).ok();
            if let Some(here) = plain_string(form) {
                assert_eq!(Some(here.to_owned()), text, "{shown}");
            }
        }
        assert_eq!(plain_id(b"42"), Some(RequestId::Number(42)));
        assert_eq!(plain_id(br#""x""#), Some(RequestId::String("x".into())));
        assert_eq!(plain_id(b"1.0"), None);
        assert_eq!(plain_string(br#""a\"b""#), None);
    }

    /// Whenever rmcp reads a body as a request, its top level names that request (each
    /// method of the table, params of its own form, of no form, of the wrong types, nested
    /// members named `id` and `method` first, ids of each form); what the top level cannot
    /// say exactly it leaves (a member given twice or named with an escape, an id rmcp does
    /// not read).
    #[test]
    #[cfg(feature = "http")]
    fn the_top_level_is_the_request_rmcp_reads() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"x":[1,2.5,-3,null,true,{"k":"\u00e9 \" } ]"}]}"#;
        let params = [
            "{}".to_owned(),
            format!("{{{meta}}}"),
            r#"{"_meta":null}"#.to_owned(),
            r#"{"_meta":5}"#.to_owned(),
            r#"{"name":"n","arguments":{"id":"b","method":"ping"}}"#.to_owned(),
            r#"{"name":7,"arguments":[1]}"#.to_owned(),
            r#"{"uri":"file:///a","cursor":"c","level":"info","taskId":"t"}"#.to_owned(),
            r#"{"notifications":null,"x":{"y":[{"z":1e300}]}}"#.to_owned(),
            r#"{"name":"n","name":"m"}"#.to_owned(),
            r#"{"n":1e400}"#.to_owned(),
            r#"{"k":"a\\","l":"\"}\"","id":5,"method":"x"}"#.to_owned(),
            r#"{"long":"more than sixteen bytes \" } ] then \\","x":"0123456789abcde\"","y":"}"}"#
                .to_owned(),
            format!(r#"{{"d":{}{}}}"#, "[".repeat(130), "]".repeat(130)),
            "[]".to_owned(),
            "null".to_owned(),
        ];
        let mut taken = 0;
        for method in MCP_REQUESTS {
            for params in &params {
                for id in [
                    "1",
                    "\"s\"",
                    "-3",
                    "2.0",
                    "\"\\u00e9\"",
                    "9223372036854775807",
                ] {
                    let bodies = [
                        format!(
                            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
                        ),
                        format!(
                            r#" {{ "params" : {params} , "method" : "{method}" ,"id":{id}, "jsonrpc":"2.0" }} "#
                        ),
                    ];
                    for body in bodies {
                        let Some(top) = top_owned(&body) else {
                            continue;
                        };
                        taken += 1;
                        let read = rmcp_reads(&body);
                        assert!(read.is_none() || read == Some(top), "{body}");
                    }
                }
            }
        }
        let each = MCP_REQUESTS.len() * params.len() * 2;
        assert!(taken >= each * 6, "{taken} of {}", each * 6);
        // Without params, or cut short after them.
        for method in MCP_REQUESTS {
            let body = format!(r#"{{"id":"b","method":"{method}","jsonrpc":"2.0"}}"#);
            let read = rmcp_reads(&body);
            assert!(read.is_none() || read == top_owned(&body), "{body}");
        }
        let left = [
            // An id rmcp refuses, another version, no method, no id.
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"ping","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"ping","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"ping","params":{}}"#,
            // Given twice, or named with an escape: which one rmcp reads is not said here.
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"initialize"}"#,
            r#"{"jsonrpc":"2.0","\u0069d":1,"method":"ping"}"#,
            // Not one JSON object.
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} {}"#,
        ];
        for body in left {
            assert!(top(body.as_bytes()).is_none(), "{body}");
        }
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let fixed =
            |s: &str| without_lone_surrogates(s.as_bytes()).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(fixed(r#""\ud800""#).as_deref(), Some(r#""\ufffd""#));
        assert_eq!(
            fixed(r#""\udc00\ud800x""#).as_deref(),
            Some(r#""\ufffd\ufffdx""#)
        );
        assert_eq!(fixed(r#""\ud83d\ude00 \\ud800 \n""#), None);
        // An escape cut short by the end of the text, or a backslash last.
        assert_eq!(fixed(r#""\ud800"#).as_deref(), Some(r#""\ufffd"#));
        assert_eq!(fixed(r#"ab\"#), None);
        assert_eq!(fixed(r#"\ud8"#), None);
    }

    #[test]
    fn deep_requests_are_answered_with_their_id() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"t","arguments":{{"a":{deep}}}}}}}"#
        );
        let answer = answered(&line).expect("answered");
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (7.into(), (-32600).into())
        );
        assert_eq!(
            answer["error"]["message"],
            "Invalid request: the message nests deeper than the 128 levels this server reads"
        );
        let big = r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#;
        assert_eq!(answered(big).unwrap().get("id"), None);
    }

    #[test]
    fn garbage_and_notifications_stay_unanswered() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        for line in [
            r#"{"jsonrpc":"2.0","id":70,"method":"tools/call","params":{"#.to_owned(),
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"x":{deep}}}}}"#
            ),
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":1,\"x\":{}",
                "[".repeat(10_000)
            ),
            "   ".to_owned(),
        ] {
            assert!(matches!(read(line.as_bytes()), Read::Drop(_)), "{line:.80}");
        }
    }
}
