//! The billing tool of the examples: invoices in memory, seeded with a few in each status.

use std::sync::Mutex;
use std::time::Duration;

use mcp_fusion::{Context, ToolErrors, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Draft,
    Open,
    Paid,
    Void,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Draft => "draft",
            Status::Open => "open",
            Status::Paid => "paid",
            Status::Void => "void",
        })
    }
}

impl std::str::FromStr for Status {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "draft" => Status::Draft,
            "open" => Status::Open,
            "paid" => Status::Paid,
            "void" => Status::Void,
            other => return Err(format!("no status {other:?}")),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum Currency {
    Eur,
    Usd,
    Gbp,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Invoice {
    pub id: String,
    pub customer_email: String,
    pub amount_cents: u64,
    pub currency: Currency,
    pub status: Status,
    pub lines: Vec<Line>,
    pub due_date: Option<String>,
}

/// The billing errors, as the server sends them and as a client reads them back
/// (`from_envelope`: `Client::call_typed` gives these variants again).
#[derive(Debug, PartialEq, ToolErrors)]
#[tool_error(from_envelope)]
pub enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with that ID", recovery = "List invoices first, then retry with a real ID",
                 actions(Billing::list_invoices), details(requestedId = id))]
    NotFound { id: String },
    #[tool_error(
        CONFLICT,
        "Invoice {id} is already paid.",
        recovery = "Check the invoice with get_invoice: a paid invoice cannot be paid again.",
        actions(Billing::get_invoice)
    )]
    AlreadyPaid { id: String },
    #[tool_error(
        CONFLICT,
        "Invoice {id} is {status} and cannot be cancelled.",
        actions(Billing::get_invoice)
    )]
    NotCancellable { id: String, status: Status },
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListInvoices {
    /// Only invoices in this status.
    pub status: Option<Status>,
    /// Only invoices of this customer.
    #[schemars(email)]
    pub customer_email: Option<String>,
    /// At most this many invoices (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InvoiceId {
    /// The invoice ID, such as `inv_2026_0001`.
    #[schemars(regex(pattern = r"^inv_[0-9]{4}_[0-9]{4}$"), example = &"inv_2026_0001")]
    pub id: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateInvoice {
    /// Who pays.
    #[schemars(email)]
    pub customer_email: String,
    /// The total, in cents.
    #[schemars(range(min = 1))]
    pub amount_cents: u64,
    pub currency: Currency,
    /// What is billed.
    #[schemars(length(min = 1, max = 50))]
    pub lines: Vec<Line>,
    /// When it is due, such as `2026-12-31`.
    #[schemars(extend("format" = "date"))]
    pub due_date: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Line {
    #[schemars(length(min = 1, max = 200))]
    pub description: String,
    #[schemars(range(min = 1))]
    pub quantity: u32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CancelInvoice {
    /// The invoice ID, such as `inv_2026_0001`.
    #[schemars(regex(pattern = r"^inv_[0-9]{4}_[0-9]{4}$"), example = &"inv_2026_0001")]
    pub id: String,
    /// Why, for the customer.
    pub reason: Option<String>,
    /// Cancel the invoice for good: only the user can give it (the server asks them).
    pub confirm: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ExportFormat {
    Csv,
    Json,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Export {
    pub format: ExportFormat,
}

/// The invoices of a small business, in memory.
pub(crate) struct Billing {
    invoices: Mutex<Vec<Invoice>>,
    /// How long an export takes.
    export: Duration,
}

impl Billing {
    /// A store seeded with invoices in each status (`inv_2026_0001` …).
    pub(crate) fn seeded() -> Self {
        let seed = [
            ("ada@example.com", 12_000, Currency::Eur, Status::Draft),
            ("grace@example.com", 4_500, Currency::Usd, Status::Open),
            ("alan@example.com", 99_00, Currency::Gbp, Status::Paid),
            ("ada@example.com", 2_000, Currency::Eur, Status::Void),
            ("grace@example.com", 31_000, Currency::Usd, Status::Open),
        ];
        let invoices = seed
            .iter()
            .enumerate()
            .map(|(i, &(email, amount_cents, currency, status))| Invoice {
                id: format!("inv_2026_{:04}", i + 1),
                customer_email: email.into(),
                amount_cents,
                currency,
                status,
                lines: vec![Line {
                    description: "Consulting".into(),
                    quantity: 1,
                }],
                due_date: None,
            })
            .collect();
        Billing {
            invoices: Mutex::new(invoices),
            export: Duration::from_millis(200),
        }
    }

    /// The same store, its exports taking `export` (200 ms by default) in five parts.
    #[allow(dead_code)] // The tour keeps the default.
    pub(crate) fn exporting_in(mut self, export: Duration) -> Self {
        self.export = export;
        self
    }

    fn find(&self, id: &str) -> Result<Invoice, BillingError> {
        let invoices = self.invoices.lock().unwrap_or_else(|p| p.into_inner());
        invoices
            .iter()
            .find(|i| i.id == id)
            .cloned()
            .ok_or_else(|| BillingError::NotFound { id: id.into() })
    }

    fn set_status(&self, id: &str, status: Status) -> Result<Invoice, BillingError> {
        let mut invoices = self.invoices.lock().unwrap_or_else(|p| p.into_inner());
        let invoice = invoices
            .iter_mut()
            .find(|i| i.id == id)
            .ok_or_else(|| BillingError::NotFound { id: id.into() })?;
        invoice.status = status;
        Ok(invoice.clone())
    }
}

/// Invoices: list, read, create, pay, cancel and export them.
#[tool(name = "billing", title = "Billing", output_schema)]
impl Billing {
    /// Lists invoices, newest first, optionally filtered by status or customer.
    #[action(read_only, idempotent, title = "List invoices")]
    async fn list_invoices(&self, args: ListInvoices) -> Result<Vec<Invoice>, BillingError> {
        let invoices = self.invoices.lock().unwrap_or_else(|p| p.into_inner());
        Ok(invoices
            .iter()
            .rev()
            .filter(|i| args.status.is_none_or(|s| s == i.status))
            .filter(|i| {
                args.customer_email
                    .as_ref()
                    .is_none_or(|e| *e == i.customer_email)
            })
            .take(args.limit.unwrap_or(20) as usize)
            .cloned()
            .collect())
    }

    /// Gets one invoice by ID.
    #[action(read_only, idempotent, title = "Get an invoice")]
    async fn get_invoice(&self, args: InvoiceId) -> Result<Invoice, BillingError> {
        self.find(&args.id)
    }

    /// Creates a draft invoice. At most 10 calls per minute.
    #[action(
        rate_limit(max = 10, window = "1m"),
        scopes("invoices:write"),
        title = "Create an invoice"
    )]
    async fn create_invoice(&self, args: CreateInvoice) -> Result<Invoice, BillingError> {
        let mut invoices = self.invoices.lock().unwrap_or_else(|p| p.into_inner());
        let invoice = Invoice {
            id: format!("inv_2026_{:04}", invoices.len() + 1),
            customer_email: args.customer_email,
            amount_cents: args.amount_cents,
            currency: args.currency,
            status: Status::Draft,
            lines: args.lines,
            due_date: args.due_date,
        };
        invoices.push(invoice.clone());
        Ok(invoice)
    }

    /// Marks an invoice paid.
    #[action(idempotent, scopes("invoices:write"), title = "Pay an invoice")]
    async fn pay_invoice(&self, args: InvoiceId) -> Result<Invoice, BillingError> {
        match self.find(&args.id)?.status {
            Status::Paid => Err(BillingError::AlreadyPaid { id: args.id }),
            _ => self.set_status(&args.id, Status::Paid),
        }
    }

    /// Cancels an invoice that is not paid yet, once the user confirms.
    #[action(
        destructive,
        scopes("invoices:write"),
        title = "Cancel an invoice",
        ask_user(confirm)
    )]
    async fn cancel_invoice(
        &self,
        args: CancelInvoice,
        f: Context,
    ) -> Result<Invoice, BillingError> {
        let invoice = self.find(&args.id)?;
        if invoice.status == Status::Paid {
            return Err(BillingError::NotCancellable {
                id: args.id,
                status: invoice.status,
            });
        }
        if args.confirm != Some(true) {
            f.warn(f.error(
                mcp_fusion::ErrorCode::custom("NOT_CONFIRMED").expect("a valid code"),
                "The user did not confirm: the invoice is unchanged.",
            ));
            return Ok(invoice);
        }
        if args.reason.is_none() {
            f.warn(f.error(
                mcp_fusion::ErrorCode::custom("NO_REASON").expect("a valid code"),
                "No reason was given; the customer will see none.",
            ));
        }
        self.set_status(&args.id, Status::Void)
    }

    /// Voids an invoice.
    #[action(
        destructive,
        deprecated,
        replacement = cancel_invoice,
        scopes("invoices:write"),
        title = "Void an invoice"
    )]
    async fn void_invoice(&self, args: InvoiceId) -> Result<Invoice, BillingError> {
        self.set_status(&args.id, Status::Void)
    }

    /// Exports every invoice (slow: about 200 ms).
    // As long as the server says (`exporting_in`). A client that declared the tasks extension
    // gets a task it polls (`tasks/get`) and may cancel (`tasks/cancel`). (A comment, not the
    // description: that is locked in `examples/mcp-fusion.lock`.)
    #[action(
        read_only,
        task,
        concurrency(max_active = 2, max_queued = 2),
        title = "Export invoices"
    )]
    async fn export_invoices(&self, args: Export, f: Context) -> Result<String, BillingError> {
        // Five parts, each reported to a client that asked for progress.
        for part in 1..=5 {
            tokio::time::sleep(self.export / 5).await;
            f.progress(
                f64::from(part),
                Some(5.0),
                Some(&format!("part {part} of 5")),
            );
        }
        let invoices = self
            .invoices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        Ok(match args.format {
            ExportFormat::Json => serde_json::to_string(&invoices).unwrap_or_default(),
            ExportFormat::Csv => {
                let rows = invoices.iter().map(|i| {
                    format!(
                        "{},{},{},{:?},{:?}",
                        i.id, i.customer_email, i.amount_cents, i.currency, i.status
                    )
                });
                std::iter::once("id,customer_email,amount_cents,currency,status".to_owned())
                    .chain(rows)
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        })
    }
}

/// The billing contract as it was before `create_invoice` took a `currency`: the lockfile an
/// older deployment wrote, for showing what a server says about the change (the tour and the
/// tests use it; the billing server itself does not).
#[allow(dead_code)]
pub(crate) fn contract_before_currency() -> mcp_fusion::contract::Contract {
    use mcp_fusion::Tool;

    let billing = Billing::seeded();
    let mut old = mcp_fusion::contract::Contract::of_tools([billing.definition()]);
    let create = old
        .tools
        .iter_mut()
        .flat_map(|tool| &mut tool.actions)
        .find(|action| action.name == "billing.create_invoice")
        .expect("create_invoice is an action");
    create.required.retain(|field| field != "currency");
    if let Some(schema) = create.input_schema.as_object_mut() {
        if let Some(properties) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
            properties.shift_remove("currency");
        }
        if let Some(required) = schema.get_mut("required").and_then(|r| r.as_array_mut()) {
            required.retain(|field| field != "currency");
        }
    }
    old
}

/// The deadline of `export_invoices`, which follows how long an export takes (ten times it:
/// 2 s for the default 200 ms), set when the server starts: a TIMEOUT envelope past it, as an
/// action's declared `timeout` answers.
#[allow(dead_code)] // The tour keeps the default.
pub(crate) struct ExportDeadline(pub(crate) Duration);

impl ExportDeadline {
    /// The deadline of an export taking `export`.
    #[allow(dead_code)]
    pub(crate) fn of(export: Duration) -> Self {
        ExportDeadline(export * 10)
    }
}

impl mcp_fusion::middleware::Middleware for ExportDeadline {
    fn handle<'a>(
        &'a self,
        info: &'a mcp_fusion::middleware::CallInfo,
        next: mcp_fusion::middleware::Next<'a>,
    ) -> mcp_fusion::tools::BoxFuture<
        'a,
        Result<mcp_fusion::rmcp::model::CallToolResult, mcp_fusion::tools::Failure>,
    > {
        if info.action() != "export_invoices" {
            return next.run();
        }
        Box::pin(async move {
            match tokio::time::timeout(self.0, next.run()).await {
                Ok(done) => done,
                Err(_) => {
                    Err(mcp_fusion::ToolError::timeout("billing.export_invoices", self.0).into())
                }
            }
        })
    }
}
