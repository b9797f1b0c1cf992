//! What one request may cost, measured by counting bytes allocated (never by timing): a call
//! whose arguments are 1 MiB of wrong values is answered with memory bounded by a multiple of
//! its size, however many problems it has (the docs of `Schema::validate` state the bound); an
//! envelope a hostile server sends is read by a client with memory bounded by a multiple of its
//! size, however many indices its fields name (the docs of `parse_envelope` state the budget).
//!
//! Figures measured here (peak bytes for 1 MiB of arguments written as JSON): `[0,0,…]` where
//! strings are expected, 211 MiB; wrong tuples, 133 MiB; strings that all differ, each a group
//! of its own, 93 MiB. Such a check took about 0.3 µs per byte of arguments on one core.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use mcp_fusion::client::{ParsedError, ParsedKind, parse_envelope};
use mcp_fusion::validate::Schema;
use serde_json::{Value, json};

/// The system allocator, counting the bytes live and their peak.
#[derive(Debug)]
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
#[allow(unsafe_code)] // A global allocator is an unsafe trait.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most a validation may allocate beyond the arguments themselves, per byte of arguments
/// as JSON text (`Schema::validate`'s docs): the validator lists each failing keyword (about
/// 400 bytes) before they are counted, and a failing value takes at least 2 bytes of JSON.
const PER_BYTE: usize = 256;

/// Validates `args` and gives the peak bytes allocated while doing so (the arguments and the
/// schema allocated before are not counted), with the number of problems the error counts.
fn cost(schema: &Schema, args: &Value) -> (usize, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let err = schema
        .validate("t.a", args)
        .expect_err("the arguments are wrong");
    let text = err.render();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    drop(text);
    println!(
        "{peak} bytes at peak to validate {} bytes of arguments",
        args.to_string().len()
    );
    (peak, err.count())
}

fn one_mib_of(element: &Value) -> (Value, usize) {
    let one = serde_json::to_string(element).expect("JSON").len() + 1;
    let items = vec![element.clone(); (1 << 20) / one];
    let args = json!({"pairs": items});
    let size = serde_json::to_string(&args).expect("JSON").len();
    (args, size)
}

/// A `Vec<(String, String)>` as schemars writes it: tuples are `prefixItems`.
fn tuples() -> Schema {
    Schema::new(&json!({
        "type": "object",
        "properties": {"pairs": {"type": "array", "items": {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "string"}],
            "minItems": 2, "maxItems": 2
        }}},
        "required": ["pairs"],
        "additionalProperties": false
    }))
    .expect("a schema")
}

/// One test at a time: the counters are the whole process's.
fn alone() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(PoisonError::into_inner)
}

#[test]
fn a_mib_of_wrong_tuples_costs_a_bounded_multiple_of_its_size() {
    let _alone = alone();
    let schema = tuples();
    let (args, size) = one_mib_of(&json!([0, 0]));
    let (peak, problems) = cost(&schema, &args);
    // Every element is one generic `prefixItems` problem.
    assert_eq!(problems, args["pairs"].as_array().map_or(0, Vec::len));
    assert!(
        peak <= PER_BYTE * size,
        "{peak} bytes allocated for {size} bytes of arguments ({problems} problems)"
    );
}

#[test]
fn a_mib_of_wrong_strings_costs_a_bounded_multiple_of_its_size() {
    let _alone = alone();
    let schema = Schema::new(&json!({
        "type": "object",
        "properties": {"pairs": {"type": "array", "items": {"type": "string", "maxLength": 1}}},
        "required": ["pairs"]
    }))
    .expect("a schema");
    for wrong in [json!("much too long"), json!(7)] {
        let (args, size) = one_mib_of(&wrong);
        let (peak, problems) = cost(&schema, &args);
        assert_eq!(problems, args["pairs"].as_array().map_or(0, Vec::len));
        assert!(
            peak <= PER_BYTE * size,
            "{peak} bytes allocated for {size} bytes of arguments ({problems} problems) of {wrong}"
        );
    }
}

/// Wrong values that all differ: no two problems are the same (ERRORS.md §11.6), so each is a
/// group of its own while the error is made, kept by its line until the first 20 are chosen.
#[test]
fn a_mib_of_different_wrong_strings_costs_a_bounded_multiple_of_its_size() {
    let _alone = alone();
    let schema = Schema::new(&json!({
        "type": "object",
        "properties": {"pairs": {"type": "array", "items": {"type": "string", "maxLength": 1}}},
        "required": ["pairs"]
    }))
    .expect("a schema");
    let items: Vec<Value> = (0..(1 << 20) / 10)
        .map(|i| json!(format!("s{i:07}")))
        .collect();
    let args = json!({"pairs": items});
    let size = serde_json::to_string(&args).expect("JSON").len();
    let (peak, problems) = cost(&schema, &args);
    assert_eq!(problems, args["pairs"].as_array().map_or(0, Vec::len));
    assert!(
        peak <= PER_BYTE * size,
        "{peak} bytes allocated for {size} bytes of arguments ({problems} problems)"
    );
}

/// The most reading an envelope may allocate, per byte of its text: the XML tree (a node and
/// its attributes for every few bytes), then the parsed strings and ranges.
const ENVELOPE_PER_BYTE: usize = 16;

/// Reads `text` as a client does; the peak bytes allocated meanwhile, and what was read.
fn read_cost(text: &str) -> (usize, ParsedError) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let parsed = parse_envelope(text);
    let peak = PEAK.load(Ordering::Relaxed) - before;
    println!(
        "{peak} bytes at peak to read {} bytes of envelope",
        text.len()
    );
    (peak, parsed)
}

/// A validation error of one `<field>` per name.
fn fields(names: impl IntoIterator<Item = String>) -> String {
    let mut text = String::from("<validation_error action=\"t.a\">");
    for name in names {
        text.push_str(&format!("<field name=\"{name}\">x</field>"));
    }
    text + "</validation_error>"
}

/// The probe of issue 51: 2,000 fields each naming 2^20 indices (72 KB), which once asked for
/// 16 GiB, are read as ranges (measured: 0.8 MB at peak; a 1 MB envelope, 2.5 to 6.5 MB).
#[test]
fn thousands_of_huge_ranges_cost_a_bounded_multiple_of_their_size() {
    let _alone = alone();
    let text = fields((0..2000).map(|_| "a[0-1048574]".to_owned()));
    let (peak, parsed) = read_cost(&text);
    assert_eq!(parsed.kind, ParsedKind::ValidationError);
    assert_eq!(parsed.fields.len(), 2000);
    // The first set takes the envelope's budget of indices: the others are read as none.
    assert_eq!(parsed.fields[0].elements.len(), 1_048_575);
    assert!(parsed.fields[1..].iter().all(|f| f.elements.is_empty()));
    assert!(
        peak <= ENVELOPE_PER_BYTE * text.len(),
        "{peak} bytes allocated for {} bytes of envelope",
        text.len()
    );
}

/// 1 MB envelopes: as many fields as are read, each a name of many huge ranges; and more fields
/// than are read.
#[test]
fn a_mb_envelope_costs_a_bounded_multiple_of_its_size() {
    let _alone = alone();
    let name = format!("a[{}0]", "0-18446744073709551614,".repeat(11));
    let text = fields((0..4096).map(|_| name.clone()));
    assert!(text.len() >= 1_000_000, "{}", text.len());
    let (peak, parsed) = read_cost(&text);
    assert_eq!(parsed.fields.len(), 4096);
    assert!(parsed.fields.iter().all(|f| f.elements.is_empty()));
    assert!(
        peak <= ENVELOPE_PER_BYTE * text.len(),
        "{peak} bytes for {}",
        text.len()
    );

    // One name of 100,000 ranges of two indices each, a million bytes: kept as ranges.
    let name: String = (0..100_000u64).map(|i| format!("{},", i * 3)).collect();
    let name = format!("a[{name}1]");
    let text = fields([name]);
    let (peak, parsed) = read_cost(&text);
    assert_eq!(parsed.fields[0].elements.ranges().len(), 100_000);
    assert!(
        peak <= ENVELOPE_PER_BYTE * text.len(),
        "{peak} bytes for {}",
        text.len()
    );

    let text = fields((0..30_000).map(|_| "a[0-1048574]".to_owned()));
    assert!(text.len() >= 1_000_000, "{}", text.len());
    let (peak, parsed) = read_cost(&text);
    assert_eq!(parsed.kind, ParsedKind::NotAnEnvelope);
    assert!(
        peak <= ENVELOPE_PER_BYTE * text.len(),
        "{peak} bytes for {}",
        text.len()
    );
}
