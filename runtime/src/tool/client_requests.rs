//! What a handler asks of its client through its [`Context`]: a form, a URL, a completion,
//! the roots, a log message (each only when the client declared it can be asked).

use rmcp::model::ElicitRequestParams;
use serde_json::Value;

use super::Context;
use super::client::{
    Ask, AskError, ClientRequestKind, ElicitForm, Elicited, LogLevel, Root, Sampled, Sampling,
    form_answer, roots, sampled,
};

impl Context {
    /// Whether the client can be asked this ([`Context::elicit`], [`Context::sample`],
    /// [`Context::roots`]): it declared the capability, and the call came over a transport
    /// with a way back to it.
    ///
    /// ```
    /// use mcp_fusion::tools::Ask;
    /// // Outside a server, nothing can be asked.
    /// assert!(!mcp_fusion::Context::detached("desk.ask").can_ask(Ask::User));
    /// ```
    pub fn can_ask(&self, ask: Ask) -> bool {
        self.client()
            .is_some_and(|client| client.link.supports(ask))
    }

    /// Asks the user to fill in a form (MCP elicitation), and waits for the answer: accepted
    /// (the form read as `T`), declined, or dismissed. The action's deadline stands still while
    /// the user thinks; the wait is bounded by the server's `ask_timeout`.
    ///
    /// ```
    /// use mcp_fusion::tools::{AskError, Elicited};
    /// use mcp_fusion::{Context, ToolError};
    /// use mcp_fusion::tools::ElicitForm;
    ///
    /// /// Confirm the deletion.
    /// #[derive(serde::Deserialize, ElicitForm)]
    /// struct Confirm {
    ///     /// Delete the note for good.
    ///     confirm: bool,
    ///     /// Why, for the log.
    ///     #[form(max_length = 200)]
    ///     reason: Option<String>,
    /// }
    ///
    /// async fn delete(f: &Context, note: &str) -> Result<String, ToolError> {
    ///     match f.elicit::<Confirm>(format!("Delete {note}?")).await? {
    ///         Elicited::Accepted(Confirm { confirm: true, reason }) => {
    ///             Ok(format!("Deleted {note} ({})", reason.unwrap_or_default()))
    ///         }
    ///         Elicited::Accepted(_) | Elicited::Declined => Ok(format!("Kept {note}")),
    ///         // An envelope that tells the model the user dismissed the question.
    ///         Elicited::Cancelled => Err(AskError::Cancelled.into()),
    ///     }
    /// }
    /// # let _ = delete;
    /// # use mcp_fusion::tools::ElicitForm as _;
    /// # assert_eq!(serde_json::to_value(Confirm::schema()).unwrap(), serde_json::json!({
    /// #     "type": "object",
    /// #     "properties": {
    /// #         "confirm": {"type": "boolean", "description": "Delete the note for good."},
    /// #         "reason": {"type": "string", "description": "Why, for the log.", "maxLength": 200},
    /// #     },
    /// #     "required": ["confirm"],
    /// # }));
    /// ```
    pub async fn elicit<T: ElicitForm>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, AskError> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema: T::schema(),
        };
        let answer = self.ask(ClientRequestKind::Elicit(params)).await?;
        form_answer(answer)
    }

    /// Asks the user to visit `url` (MCP URL elicitation: a sign-in, a payment), and waits for
    /// whether they did.
    ///
    /// ```
    /// # async fn pay(f: &mcp_fusion::Context) -> Result<(), mcp_fusion::ToolError> {
    /// f.elicit_url("Pay the invoice", "https://pay.example/inv_1").await?.accepted()?;
    /// # Ok(()) }
    /// ```
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicited<()>, AskError> {
        let url = url.into();
        let params = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: message.into(),
            elicitation_id: url_elicitation_id(&url),
            url,
        };
        let answer = self.ask(ClientRequestKind::Elicit(params)).await?;
        match form_answer::<Value>(answer)? {
            Elicited::Accepted(_) => Ok(Elicited::Accepted(())),
            Elicited::Declined => Ok(Elicited::Declined),
            Elicited::Cancelled => Ok(Elicited::Cancelled),
        }
    }

    /// Asks the client's model (MCP sampling), and waits for its answer. The action's deadline
    /// stands still meanwhile.
    ///
    /// ```
    /// use mcp_fusion::tools::Sampling;
    ///
    /// # async fn summary(f: &mcp_fusion::Context) -> Result<String, mcp_fusion::ToolError> {
    /// let answer = f.sample(Sampling::new(100).user("Say hello.")).await?;
    /// Ok(answer.text().unwrap_or_default().to_owned())
    /// # }
    /// ```
    pub async fn sample(&self, sampling: Sampling) -> Result<Sampled, AskError> {
        let answer = self.ask(ClientRequestKind::Sample(sampling.0)).await?;
        sampled(answer)
    }

    /// The client's roots (MCP roots: the folders it works in).
    ///
    /// ```
    /// # async fn folders(f: &mcp_fusion::Context) -> Result<usize, mcp_fusion::ToolError> {
    /// Ok(f.roots().await?.len())
    /// # }
    /// ```
    pub async fn roots(&self) -> Result<Vec<Root>, AskError> {
        let answer = self.ask(ClientRequestKind::Roots).await?;
        roots(answer)
    }

    /// Logs `data` (text, or any JSON) to the client at `level` (MCP `notifications/message`),
    /// when the client's level lets it through. At most 100 messages a call. Whether it was
    /// sent.
    ///
    /// - Up to 2025-11-25 (a session): the level the client set with `logging/setLevel`; until
    ///   it sets one, `info` and above are sent (`debug` only once it asks for it).
    /// - From 2026-07-28: the level the call's request carries (`logLevel` in its `_meta`);
    ///   nothing when it carries none, as that revision says.
    /// - Stateless HTTP before 2026-07-28, and a context outside a server: nothing (there is no
    ///   way back to the client).
    ///
    /// ```
    /// use mcp_fusion::tools::LogLevel;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let f = mcp_fusion::Context::detached("billing.export_invoices");
    /// // No client: nothing is sent.
    /// assert!(!f.log(LogLevel::Info, "exporting 3 invoices").await);
    /// # }
    /// ```
    pub async fn log(&self, level: LogLevel, data: impl serde::Serialize) -> bool {
        let Some(client) = self.client() else {
            return false;
        };
        let Ok(data) = serde_json::to_value(data) else {
            return false;
        };
        client
            .link
            .log(level.into(), Some(self.action()), data)
            .await
    }

    /// Sends `request` to the client, the action's deadline paused meanwhile, within the
    /// server's `ask_timeout`: the client's answer as it gave it (the gateway relays an
    /// upstream's requests through it).
    pub(crate) async fn ask(&self, request: ClientRequestKind) -> Result<Value, AskError> {
        let ask = request.ask();
        let client = self.client().ok_or(AskError::NotSupported { ask })?;
        let _paused = self.deadline().map(super::deadline::Deadline::pause);
        client.ask(request).await
    }
}

/// An id for a URL elicitation, the same for the same URL (a call run again asks the same).
fn url_elicitation_id(url: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(url.as_bytes());
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}
