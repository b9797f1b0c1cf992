//! A JSON reader for the conformance suite's `checks.json` (xtask uses the standard library
//! only): the whole of JSON, read into [`Json`]; numbers are kept as `f64`.

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    /// Its members in the order written.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Reads `text`, one JSON value and nothing else but whitespace; or where and why it is not.
pub(crate) fn parse(text: &str) -> Result<Json, String> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
    };
    let value = reader.value(0)?;
    reader.space();
    match reader.at == reader.bytes.len() {
        true => Ok(value),
        false => Err(reader.error("text after the value")),
    }
}

/// Deeper than this, a document is refused rather than read (the reader recurses).
const MAX_DEPTH: usize = 128;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.at)
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        let here = self.bytes.get(self.at) == Some(&byte);
        self.at += usize::from(here);
        here
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, String> {
        match self.bytes[self.at..].starts_with(word.as_bytes()) {
            true => {
                self.at += word.len();
                Ok(value)
            }
            false => Err(self.error("not a JSON value")),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deep"));
        }
        self.space();
        match self.bytes.get(self.at) {
            None => Err(self.error("the text ends before a value")),
            Some(b'n') => self.word("null", Json::Null),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.space();
                if self.eat(b']') {
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.space();
                    if self.eat(b']') {
                        return Ok(Json::Array(items));
                    }
                    if !self.eat(b',') {
                        return Err(self.error("expected , or ]"));
                    }
                }
            }
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.space();
                if self.eat(b'}') {
                    return Ok(Json::Object(members));
                }
                loop {
                    self.space();
                    if self.bytes.get(self.at) != Some(&b'"') {
                        return Err(self.error("expected a member's name"));
                    }
                    let key = self.string()?;
                    self.space();
                    if !self.eat(b':') {
                        return Err(self.error("expected :"));
                    }
                    members.push((key, self.value(depth + 1)?));
                    self.space();
                    if self.eat(b'}') {
                        return Ok(Json::Object(members));
                    }
                    if !self.eat(b',') {
                        return Err(self.error("expected , or }"));
                    }
                }
            }
            Some(_) => self.number(),
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
        // Rust's float syntax is wider than JSON's (`inf`, `+1`, `.5`): JSON's first character
        // and digits around the point are checked here.
        let json_shaped = text.starts_with(|c: char| c == '-' || c.is_ascii_digit())
            && !text.contains(".e")
            && !text.ends_with('.')
            && !text.contains("-.");
        match (json_shaped, text.parse::<f64>()) {
            (true, Ok(n)) => Ok(Json::Number(n)),
            _ => {
                self.at = start;
                Err(self.error("not a JSON value"))
            }
        }
    }

    /// A string, the reader on its opening quote.
    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // The text is a `&str`, and the run stops only at ASCII: a whole UTF-8 slice.
            out.push_str(std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default());
            match self.bytes.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = self.bytes.get(self.at).copied();
                    self.at += 1;
                    out.push(match escaped {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => self.unicode()?,
                        _ => return Err(self.error("an unknown escape")),
                    });
                }
                Some(_) => return Err(self.error("a control character in a string")),
                None => return Err(self.error("a string without its closing quote")),
            }
        }
    }

    /// The character of a `\u` escape (a surrogate pair's two escapes), the reader after `u`.
    fn unicode(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        let code = match high {
            0xD800..=0xDBFF => {
                if !(self.eat(b'\\') && self.eat(b'u')) {
                    return Err(self.error("a lone surrogate"));
                }
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(self.error("a lone surrogate"));
                }
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            _ => high,
        };
        char::from_u32(code).ok_or_else(|| self.error("a lone surrogate"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.bytes.get(self.at..self.at + 4);
        let code = digits
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("a \\u escape without four hex digits"))?;
        self.at += 4;
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_value() {
        let text = r#" {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"\\\/\n\u00e9\ud83d\ude00"}, "d": []} "#;
        let value = parse(text).unwrap();
        assert_eq!(
            value.get("a"),
            Some(&Json::Array(vec![
                Json::Number(1.0),
                Json::Number(-2500.0),
                Json::Bool(true),
                Json::Bool(false),
                Json::Null
            ]))
        );
        let c = value
            .get("b")
            .and_then(|b| b.get("c"))
            .and_then(Json::as_str);
        assert_eq!(c, Some("x\"\\/\né😀"));
        assert_eq!(value.get("d"), Some(&Json::Array(Vec::new())));
        assert_eq!(value.get("e"), None);
        assert_eq!(parse("\"é\"").unwrap(), Json::String("é".into()));
    }

    #[test]
    fn refuses_what_is_not_json() {
        for bad in [
            "",
            "[1,]",
            "{\"a\" 1}",
            "{a: 1}",
            "[1] 2",
            "\"open",
            "\"\\x\"",
            "\"\\ud800\"",
            "nul",
            "+1",
            ".5",
            "1.",
            "[\"a\nb\"]",
            "inf",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was read");
        }
        let deep = "[".repeat(MAX_DEPTH + 2);
        assert!(parse(&deep).unwrap_err().contains("nested too deep"));
    }
}
