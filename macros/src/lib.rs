//! Procedural macros of `mcp-fusion`. Depend on `mcp-fusion`, which re-exports them.
