//! What one request may cost, measured by counting bytes allocated (never by timing): a call
//! whose arguments are 1 MiB of wrong values is answered with memory bounded by a multiple of
//! its size, however many problems it has (the docs of `Schema::validate` state the bound).
//!
//! Figures measured here (peak bytes for 1 MiB of arguments written as JSON): `[0,0,…]` where
//! strings are expected, 211 MiB; wrong tuples, 133 MiB; strings that all differ, each a group
//! of its own, 93 MiB. Such a check took about 0.3 µs per byte of arguments on one core.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

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
