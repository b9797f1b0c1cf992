use serde_json::json;

use crate::tool::{ActionDef, Failure};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Page {
    id: String,
    limit: u32,
}

#[test]
fn decodes_into_the_type_it_was_made_with_only() {
    let action = ActionDef::new::<Page>("list").build();
    let page: Page = action.decode(&json!({"id": "a", "limit": 3})).unwrap();
    assert_eq!((page.id.as_str(), page.limit), ("a", 3));
    // The second decoding (integers fixed) writes into the same slot.
    let page: Page = action.decode(&json!({"id": "b", "limit": 4.0})).unwrap();
    assert_eq!((page.id.as_str(), page.limit), ("b", 4));
    // Decoded as `Page`, asked as another type: the slot stays empty.
    let other = action.decode::<String>(&json!({"id": "a", "limit": 3}));
    assert!(matches!(other, Err(Failure::Internal(_))));
    // Refused by `Page`: the decoder row, not an internal error.
    let refused = action.decode::<Page>(&json!({"id": 7, "limit": 3}));
    assert!(matches!(refused, Err(Failure::Invalid(_))));
}
