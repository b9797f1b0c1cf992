//! What a handler asks of its client through its [`Context`]: a form, a URL, a completion,
//! the roots, a log message (each only when the client declared it can be asked); and the same
//! asks under a key of the handler's choosing ([`Input`]).

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
        self.elicit_as(None, message.into()).await
    }

    /// Asks the user to open `url` (MCP URL elicitation: a sign-in, a payment), and waits for
    /// their answer.
    ///
    /// [`Elicited::Accepted`] means only that the user agreed to open the link: not that they
    /// opened it, nor what they did there (signed in, paid, gave up halfway). Learn the outcome
    /// from the site itself (the payment provider, the identity provider) before acting on it.
    /// Declined and cancelled mean the user would not open it.
    ///
    /// Only `https` links are shown, and `http` links to this machine (`localhost`, `127.0.0.1`,
    /// `[::1]`, for development). The link is read as a browser reads it and sent as read. Any
    /// other link (`http` elsewhere, `javascript:`, `file:`, `data:`, no URL) is not sent:
    /// [`AskError::UrlRefused`], which tells the model to call again with an `https` link.
    /// Each ask has an id of its own, drawn from the operating system's random source.
    ///
    /// ```
    /// # async fn pay(f: &mcp_fusion::Context) -> Result<(), mcp_fusion::ToolError> {
    /// f.elicit_url("Pay the invoice", "https://pay.example/inv_1").await?.accepted()?;
    /// // The user agreed to open the page: ask the payment provider whether inv_1 is paid.
    /// # Ok(()) }
    /// ```
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicited<()>, AskError> {
        self.elicit_url_as(None, message.into(), url.into()).await
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
        let answer = self.ask_as(ClientRequestKind::Sample(sampling.0), None);
        sampled(answer.await?)
    }

    /// The client's roots (MCP roots: the folders it works in).
    ///
    /// ```
    /// # async fn folders(f: &mcp_fusion::Context) -> Result<usize, mcp_fusion::ToolError> {
    /// Ok(f.roots().await?.len())
    /// # }
    /// ```
    pub async fn roots(&self) -> Result<Vec<Root>, AskError> {
        roots(self.ask_as(ClientRequestKind::Roots, None).await?)
    }

    /// The next ask, named `key`: from MCP 2026-07-28, where a call that asks its client ends
    /// its round with `input_required` (SEP-2322), `key` is the ask's key in the round's
    /// `inputRequests`, and the client answers under it. Unnamed, an ask is keyed by its kind and
    /// its place in the call (`elicitation-1`, `sampling-2`), which is all a client needs; a
    /// name is for a client (or a test) that expects a key of its own. Each ask of a call needs
    /// its own key: a second ask under one is refused ([`AskError::Failed`]). Up to
    /// 2025-11-25 the client is asked on the session, and the key is not sent.
    ///
    /// ```
    /// use mcp_fusion::tools::ElicitForm;
    /// use mcp_fusion::{Context, ToolError};
    ///
    /// /// Your name.
    /// #[derive(serde::Deserialize, ElicitForm)]
    /// struct Name {
    ///     /// What you are called.
    ///     name: String,
    /// }
    ///
    /// async fn greet(f: &Context) -> Result<String, ToolError> {
    ///     // Asked as `inputRequests.user_name`, answered as `inputResponses.user_name`.
    ///     let name = f.input("user_name").elicit::<Name>("What is your name?").await?;
    ///     Ok(format!("Hello, {}!", name.accepted()?.name))
    /// }
    /// # let _ = greet;
    /// ```
    pub fn input<'a>(&'a self, key: &'a str) -> Input<'a> {
        Input { context: self, key }
    }

    async fn elicit_as<T: ElicitForm>(
        &self,
        key: Option<&str>,
        message: String,
    ) -> Result<Elicited<T>, AskError> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: T::schema(),
        };
        form_answer(self.ask_as(ClientRequestKind::Elicit(params), key).await?)
    }

    async fn elicit_url_as(
        &self,
        key: Option<&str>,
        message: String,
        url: String,
    ) -> Result<Elicited<()>, AskError> {
        let url = shown_url(&url)?;
        let params = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message,
            elicitation_id: elicitation_id()?,
            url,
        };
        let answer = self.ask_as(ClientRequestKind::Elicit(params), key).await?;
        match form_answer::<Value>(answer)? {
            Elicited::Accepted(_) => Ok(Elicited::Accepted(())),
            Elicited::Declined => Ok(Elicited::Declined),
            Elicited::Cancelled => Ok(Elicited::Cancelled),
        }
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
    /// The host gets what a person can safely read: every control character but `\n` and `\t`
    /// written as its escape (`\u001b`), in strings and keys; and a message of more than 16 KiB
    /// as JSON is sent as a string cut to 16 KiB, ending ` [... {n} more bytes cut]`.
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

    /// Sends `request` to the client within the server's `ask_timeout`, the action's deadline
    /// paused meanwhile when `pause`: the client's answer as it gave it (the gateway relays an
    /// upstream's requests through it).
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    pub(crate) async fn ask(
        &self,
        request: ClientRequestKind,
        pause: bool,
    ) -> Result<Value, AskError> {
        if pause {
            return self.ask_as(request, None).await;
        }
        let ask = request.ask();
        let client = self.client().ok_or(AskError::NotSupported { ask })?;
        client.ask(request, None).await
    }

    /// [`Context::ask`], the ask named `key` when the handler named it ([`Context::input`]).
    async fn ask_as(
        &self,
        request: ClientRequestKind,
        key: Option<&str>,
    ) -> Result<Value, AskError> {
        let ask = request.ask();
        let client = self.client().ok_or(AskError::NotSupported { ask })?;
        let _paused = self.deadline().map(super::deadline::Deadline::pause);
        client.ask(request, key).await
    }
}

/// An ask of the client under a key of the handler's choosing ([`Context::input`]): the same
/// asks as [`Context`]'s, the key aside.
///
/// ```
/// use mcp_fusion::tools::Sampling;
///
/// # async fn capital(f: &mcp_fusion::Context) -> Result<String, mcp_fusion::ToolError> {
/// let question = Sampling::new(100).user("What is the capital of France?");
/// let answer = f.input("capital_question").sample(question).await?;
/// Ok(answer.text().unwrap_or_default().to_owned())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    context: &'a Context,
    key: &'a str,
}

impl Input<'_> {
    /// [`Context::elicit`], under this key.
    pub async fn elicit<T: ElicitForm>(
        self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, AskError> {
        self.context.elicit_as(Some(self.key), message.into()).await
    }

    /// [`Context::elicit_url`], under this key.
    pub async fn elicit_url(
        self,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicited<()>, AskError> {
        let (message, url) = (message.into(), url.into());
        self.context
            .elicit_url_as(Some(self.key), message, url)
            .await
    }

    /// [`Context::sample`], under this key.
    pub async fn sample(self, sampling: Sampling) -> Result<Sampled, AskError> {
        let answer = self
            .context
            .ask_as(ClientRequestKind::Sample(sampling.0), Some(self.key));
        sampled(answer.await?)
    }

    /// [`Context::roots`], under this key.
    pub async fn roots(self) -> Result<Vec<Root>, AskError> {
        roots(
            self.context
                .ask_as(ClientRequestKind::Roots, Some(self.key))
                .await?,
        )
    }
}

/// The link as a browser reads it, when it may be shown to the user: `https`, or `http` to a
/// loopback host.
fn shown_url(url: &str) -> Result<String, AskError> {
    let refused = |scheme: &str| AskError::UrlRefused {
        scheme: scheme.to_owned(),
    };
    let parsed = url::Url::parse(url).map_err(|_| refused(""))?;
    let loopback = match parsed.host() {
        Some(url::Host::Domain(host)) => host == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match parsed.scheme() {
        "https" => Ok(parsed.into()),
        "http" if loopback => Ok(parsed.into()),
        scheme => Err(refused(scheme)),
    }
}

/// A link an upstream asks the gateway to show the user: `https` only, read as
/// [`shown_url`] reads it (a loopback `http` link would name the user's own machine, which is
/// no upstream's to point at).
#[cfg_attr(not(feature = "gateway"), allow(dead_code))]
pub(crate) fn relayed_url(url: &str) -> Result<String, AskError> {
    let shown = shown_url(url)?;
    match shown.starts_with("https:") {
        true => Ok(shown),
        false => Err(AskError::UrlRefused {
            scheme: "http".to_owned(),
        }),
    }
}

/// A new id for a URL elicitation: 128 bits from the operating system's random source, so that
/// no two asks (of one user or of two) share one, and none can be guessed.
fn elicitation_id() -> Result<String, AskError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        tracing::error!(error = %e, "no random id for a link");
        AskError::Failed {
            ask: Ask::User,
            reason: "no random id could be made for the link".to_owned(),
        }
    })?;
    Ok(crate::hex::lower(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_and_loopback_http_links_are_shown() {
        for (given, shown) in [
            ("https://pay.example/inv_1", "https://pay.example/inv_1"),
            ("HTTPS://Pay.Example", "https://pay.example/"),
            ("http://localhost:8080/cb", "http://localhost:8080/cb"),
            ("http://127.0.0.1/x", "http://127.0.0.1/x"),
            ("http://127.1/x", "http://127.0.0.1/x"),
            ("http://[::1]:3000/", "http://[::1]:3000/"),
            (" https://a.example/\tb ", "https://a.example/b"),
        ] {
            assert_eq!(shown_url(given).as_deref(), Ok(shown), "{given}");
        }
        for (given, scheme) in [
            ("http://pay.example/inv_1", "http"),
            ("http://localhost@evil.example/", "http"),
            ("http://localhost.evil.example/", "http"),
            ("http://10.0.0.1/", "http"),
            ("javascript:alert(1)", "javascript"),
            ("file:///etc/passwd", "file"),
            ("data:text/html,<b>hi</b>", "data"),
            ("ftp://files.example/", "ftp"),
            ("pay.example/inv_1", ""),
            ("", ""),
        ] {
            assert_eq!(
                shown_url(given),
                Err(AskError::UrlRefused {
                    scheme: scheme.into()
                }),
                "{given}"
            );
        }
    }

    #[test]
    fn a_relayed_link_is_https_only() {
        let shown = relayed_url("HTTPS://Pay.Example/x");
        assert_eq!(shown.as_deref(), Ok("https://pay.example/x"));
        for given in [
            "http://localhost:8080/cb",
            "http://127.0.0.1/",
            "http://pay.example/",
        ] {
            let scheme = "http".to_owned();
            assert_eq!(relayed_url(given), Err(AskError::UrlRefused { scheme }));
        }
        let scheme = "javascript".to_owned();
        let refused = relayed_url("javascript:alert(1)");
        assert_eq!(refused, Err(AskError::UrlRefused { scheme }));
    }

    #[test]
    fn each_ask_has_an_id_of_its_own() {
        let ids: Vec<String> = (0..64).map(|_| elicitation_id().expect("an id")).collect();
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        );
        let mut distinct = ids.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), ids.len());
    }
}
