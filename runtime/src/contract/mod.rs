//! The contract of a server, locked in `mcp-fusion.lock`, and what changed since.
//!
//! A model that learned a tool yesterday sends yesterday's arguments today. The lockfile is the
//! known-good record of every action's contract; [`Diff`] classifies each difference from it, and
//! a server started with its lockfile ([`ServerBuilder::contract_lock`]) tells the model, inside the
//! validation errors of affected actions, exactly what changed (ERRORS.md §7).
//!
//! | change | severity |
//! |---|---|
//! | tool or action removed | BREAKING |
//! | field added and required; field newly required | BREAKING |
//! | field removed from an object that rejects unknown fields | BREAKING |
//! | type changed (other than to a wider set of types) | BREAKING |
//! | enum value removed; `enum` or `const` added; `const` changed | BREAKING |
//! | bound tightened or added (`minimum`, `maxLength`, `minItems`, ...) | BREAKING |
//! | unknown fields newly rejected; `uniqueItems` newly set | BREAKING |
//! | `read_only` lost, `destructive` gained | BREAKING |
//! | OAuth scope added (a caller whose token lacks it is refused) | BREAKING |
//! | `idempotent` changed, `open_world` gained | RISKY |
//! | `pattern`, `format` or `multipleOf` changed or added; `default` changed | RISKY |
//! | field removed from an object that ignores unknown fields | RISKY |
//! | alternatives (`anyOf`/`oneOf`/`allOf`) added or removed; any other keyword changed | RISKY |
//! | tool, action or optional field added | SAFE |
//! | requirement dropped; bound loosened or removed; enum value added; type widened | SAFE |
//! | `pattern`, `format`, `multipleOf`, `enum`, `const` removed; unknown fields newly accepted | SAFE |
//! | `read_only` gained, `destructive` or `open_world` lost; deprecated or undeprecated | SAFE |
//! | OAuth scope removed | SAFE |
//! | descriptions, titles, examples; a deprecation's note or replacement | COSMETIC |
//!
//! An action's output schema (what a host reads in `structuredContent`) is compared the other
//! way round, for the host that reads it; these changes are never shown to the model, whose
//! arguments they do not touch:
//!
//! | output change | severity |
//! |---|---|
//! | output schema or output field removed; field no longer always present | BREAKING |
//! | type changed or widened (a reader may get a type it does not expect) | BREAKING |
//! | enum value added; any other keyword changed | RISKY |
//! | output schema or field added; field now always present; type narrowed; enum value removed | SAFE |
//!
//! ```
//! use mcp_fusion::contract::{Contract, Diff};
//! use mcp_fusion::tools::{ActionDef, ToolDef};
//!
//! let tool = ToolDef::new("billing")
//!     .action(ActionDef::without_arguments("list_invoices").read_only())
//!     .build();
//! let contract = Contract::of_tools([&tool]);
//! let lockfile = contract.to_lockfile();
//! assert_eq!(Contract::from_lockfile(&lockfile).unwrap(), contract);
//! assert!(Diff::between(&contract, &contract).is_empty());
//! ```
//!
//! [`ServerBuilder::contract_lock`]: crate::server::ServerBuilder::contract_lock

mod awareness;
mod check;
mod classify;
mod diff;
mod lines;
mod lockfile;
mod model;

pub use awareness::{
    ChangeSeverity, ContractChange, DEFAULT_MAX_CHANGES, inject_contract_awareness,
};
pub(crate) use awareness::{awareness_of_invalid, inject_removed_action};
pub use check::{LockfileMismatch, UPDATE_ENV, assert_lockfile, verify_lockfile};
pub(crate) use classify::OUTPUT;
pub use diff::Diff;
pub use lockfile::{LockfileError, MAX_LOCKFILE_BYTES};
#[cfg(feature = "gateway")]
pub(crate) use model::SEPARATOR;
pub use model::{ActionContract, Contract, ToolContract, ToolSet, UpstreamContract};
