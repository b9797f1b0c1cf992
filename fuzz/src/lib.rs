//! Helpers shared by the fuzz targets: bounded JSON values built from fuzzer bytes, and the
//! XML facts of ERRORS.md §2 the targets check envelopes against.

use arbitrary::{Result, Unstructured};
use roxmltree::Document;
use serde_json::{Map, Number, Value};

/// Whether XML 1.0 allows `c` in a document: anything but the controls other than TAB, LF and
/// CR, and U+FFFE, U+FFFF (ERRORS.md §2 replaces exactly these by U+FFFD).
pub fn is_xml_char(c: char) -> bool {
    !matches!(
        c,
        '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}'
    )
}

/// `s` as a conforming XML parser reads it back after rendering: forbidden characters become
/// U+FFFD.
pub fn xml_replaced(s: &str) -> String {
    s.chars()
        .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
        .collect()
}

/// Parses an envelope as a strict XML 1.0 parser would, panicking with the text when it is
/// not well-formed (ERRORS.md §2: every envelope is).
pub fn well_formed(text: &str) -> Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..Default::default()
    };
    match Document::parse_with_options(text, options) {
        Ok(doc) => doc,
        Err(e) => panic!("envelope is not well-formed XML ({e}):\n{text}"),
    }
}

/// Numbers around the bounds the contract writes: integer limits, plain/exponent switch-overs
/// (1e-5, 1e16), fractions that fail `integer` and `multipleOf`.
const NUMBERS: &[f64] = &[
    0.0,
    -0.0,
    0.5,
    2.0,
    2.5,
    0.75,
    1e16,
    1e-5,
    1.5e-7,
    9999999999999998.0,
    1e308,
    -1e308,
    0.30000000000000004,
    1000000.5,
];

/// Integers at the bounds of the schemas under test and at the limits of `i64`.
const INTEGERS: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    5,
    7,
    99,
    100,
    1_000_000,
    -10,
    i64::MIN,
    i64::MAX,
];

/// Builds a JSON value of bounded size and depth from fuzzer bytes. Object keys and strings
/// come mostly from a vocabulary, so that declared fields and format examples turn up often;
/// the rest are arbitrary text.
pub struct JsonBuilder<'v> {
    keys: &'v [String],
    strings: &'v [&'v str],
    nodes_left: usize,
}

impl<'v> JsonBuilder<'v> {
    /// At most `max_nodes` values in all, keys drawn from `keys`, strings from `strings`.
    pub fn new(keys: &'v [String], strings: &'v [&'v str], max_nodes: usize) -> Self {
        JsonBuilder {
            keys,
            strings,
            nodes_left: max_nodes,
        }
    }

    /// A value nested at most `depth` arrays or objects deep.
    pub fn value(&mut self, u: &mut Unstructured, depth: usize) -> Result<Value> {
        self.nodes_left = self.nodes_left.saturating_sub(1);
        let containers = depth > 0 && self.nodes_left > 0;
        Ok(match u.choose_index(if containers { 7 } else { 5 })? {
            0 => Value::Null,
            1 => Value::Bool(u.arbitrary()?),
            2 => self.number(u)?,
            3 | 4 => Value::String(self.string(u)?),
            5 => Value::Array(self.items(u, depth - 1)?),
            _ => Value::Object(self.object(u, depth - 1)?),
        })
    }

    /// An object: keys from the vocabulary or arbitrary, each with a value `depth` deep.
    pub fn object(&mut self, u: &mut Unstructured, depth: usize) -> Result<Map<String, Value>> {
        let len = u.int_in_range(0..=6)?;
        let mut map = Map::new();
        for _ in 0..len {
            if self.nodes_left == 0 {
                break;
            }
            let key = self.key(u)?;
            let value = self.value(u, depth)?;
            map.insert(key, value);
        }
        Ok(map)
    }

    fn items(&mut self, u: &mut Unstructured, depth: usize) -> Result<Vec<Value>> {
        let len = u.int_in_range(0..=5)?;
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            if self.nodes_left == 0 {
                break;
            }
            items.push(self.value(u, depth)?);
        }
        Ok(items)
    }

    fn key(&mut self, u: &mut Unstructured) -> Result<String> {
        if !self.keys.is_empty() && u.ratio(3, 4)? {
            return Ok(u.choose(self.keys)?.clone());
        }
        text(u, 64)
    }

    /// A string from the vocabulary, arbitrary text, or one character repeated around the cut
    /// at 50 characters (§5).
    pub fn string(&mut self, u: &mut Unstructured) -> Result<String> {
        Ok(match u.choose_index(4)? {
            0 | 1 if !self.strings.is_empty() => (*u.choose(self.strings)?).to_owned(),
            2 => {
                let c: char = u.arbitrary()?;
                c.to_string().repeat(u.int_in_range(45..=55)?)
            }
            _ => text(u, 80)?,
        })
    }

    fn number(&mut self, u: &mut Unstructured) -> Result<Value> {
        let n = match u.choose_index(5)? {
            0 => Number::from(*u.choose(INTEGERS)?),
            1 => Number::from(u.arbitrary::<i64>()?),
            2 => Number::from(u.arbitrary::<u64>()?),
            3 => return Ok(float(*u.choose(NUMBERS)?)),
            _ => return Ok(float(u.arbitrary()?)),
        };
        Ok(Value::Number(n))
    }
}

/// A finite double as a JSON number; JSON has no NaN or infinity, so those become `null`.
fn float(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// Arbitrary text of at most `max` characters.
pub fn text(u: &mut Unstructured, max: usize) -> Result<String> {
    let s: &str = u.arbitrary()?;
    Ok(s.chars().take(max).collect())
}
