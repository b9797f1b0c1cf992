//! The server's contract lockfile: what changed since it, handed to each tool's pipeline.

use std::sync::Arc;

use super::{ContractNotes, Server};
use crate::ContractChange;
use crate::contract::{Contract, Diff};

impl Server {
    /// Starts the server with its lockfile: validation errors of actions whose contract changed
    /// since then tell the model what changed (ERRORS.md §7). See [`crate::contract`].
    ///
    /// ```
    /// use mcp_fusion::contract::Contract;
    /// use mcp_fusion::server::Server;
    ///
    /// # let lockfile = Contract { tools: vec![] }.to_lockfile();
    /// let locked = Contract::from_lockfile(&lockfile).expect("a lockfile");
    /// let server = Server::new("billing-server", "1.0.0").contract_lock(locked);
    /// ```
    pub fn contract_lock(mut self, locked: Contract) -> Self {
        self.inner().locked = Some(locked);
        self.note_contract_changes();
        self
    }

    /// How many changes a `<contract_awareness>` block shows (default 5); all are counted.
    pub fn max_contract_changes(mut self, max: usize) -> Self {
        self.inner().max_contract_changes = max;
        self.note_contract_changes();
        self
    }

    /// Hands each tool's pipeline the changes that concern it.
    pub(super) fn note_contract_changes(&mut self) {
        let inner = self.inner();
        let Some(locked) = &inner.locked else {
            return;
        };
        let running = Contract::of_tools(inner.tools.iter().map(|t| t.tool.definition()));
        let diff = Diff::between(locked, &running);
        let max = inner.max_contract_changes;
        for registered in &mut inner.tools {
            let changes: Vec<ContractChange> = diff
                .tool(registered.tool.definition().name())
                .iter()
                .filter(|c| c.severity.reaches_the_model())
                // An output change concerns the host that reads results, not the model's
                // arguments: a validation error does not tell it.
                .filter(|c| !c.field.starts_with(crate::contract::OUTPUT))
                .cloned()
                .collect();
            let pipeline = Arc::get_mut(&mut registered.pipeline)
                .expect("a server is configured before it serves");
            pipeline.contract = (!changes.is_empty()).then_some(ContractNotes { changes, max });
        }
    }
}
