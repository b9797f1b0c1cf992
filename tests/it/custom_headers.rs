//! Fields mirrored in HTTP headers (2026-07-28, SEP-2243): listed with `x-mcp-header`, checked
//! over streamable HTTP against the body (a missing, mismatched or bad-Base64 `Mcp-Param-*`
//! header is HTTP 400 with JSON-RPC -32020; a value without the `=?base64?...?=` wrapper is
//! literal) whichever path the request takes; every misuse refused when the server is built;
//! tool names clients refuse refused there too; `tools/list` the same each time.

use mcp_fusion::server::HttpOptions;
use mcp_fusion::tools::{ActionDef, Exposition, ToolDef};
use mcp_fusion::{Server, ToolError, tool};
use mcp_fusion_drivers::raw_http::{self, Reply};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::client::stateless;
use crate::support::Defined;

/// Where to deploy.
#[derive(Deserialize, JsonSchema)]
struct Deploy {
    /// The region, as the proxy routes on it.
    region: String,
    /// How many copies.
    #[serde(default)]
    replicas: u32,
}

/// A tenant's notes.
#[derive(Deserialize, JsonSchema)]
struct Note {
    /// The tenant.
    tenant: String,
    /// The note.
    text: String,
}

/// Deploys to a region: the region is mirrored in `Mcp-Param-Region`.
#[tool(header(region = "Region"))]
async fn deploy(args: Deploy) -> Result<String, ToolError> {
    Ok(format!("{} x{}", args.region, args.replicas))
}

/// Notes, kept per tenant (mirrored in `Mcp-Param-Tenant`).
struct Notes;

/// A tenant's notes.
#[tool]
impl Notes {
    /// Writes a note.
    #[action(header(tenant = "Tenant"))]
    async fn write(&self, args: Note) -> Result<String, ToolError> {
        Ok(format!("{}: {}", args.tenant, args.text))
    }

    /// Reads the notes.
    #[action(read_only)]
    async fn count(&self) -> Result<u32, ToolError> {
        Ok(0)
    }
}

fn server() -> Server {
    Server::builder("headers", "1")
        .tool(DeployTool)
        .tool(Notes)
        .build()
        .expect("the server builds")
}

/// A 2026-07-28 `tools/call` of `name` with `arguments`, as a client sends it, with the
/// standard headers and `extra` (the `Mcp-Param-*` headers).
async fn call(addr: &str, name: &str, arguments: Value, extra: &[(&str, &str)]) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
    "name": name, "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }}});
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", name),
    ];
    headers.extend_from_slice(extra);
    raw_http::post(addr, &headers, body.to_string().as_bytes()).await
}

/// The call was answered with a result whose text is `text`.
fn answered(reply: &Reply, text: &str) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    let message = reply.message();
    let result = &message["result"];
    assert_ne!(result["isError"], true, "{message}");
    assert_eq!(result["content"][0]["text"], text, "{message}");
}

/// The call was refused as the header check refuses: HTTP 400, JSON-RPC -32020.
fn mismatched(reply: &Reply) -> String {
    assert_eq!(reply.status, 400, "{}", reply.body);
    let message = reply.message();
    assert_eq!(message["error"]["code"], -32020, "{message}");
    message["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Each way of serving streamable HTTP: stateless with and without the fast path, and with
/// sessions (a 2026-07-28 request needs none).
fn every_serving() -> [HttpOptions; 3] {
    let mut fast = HttpOptions::default();
    fast.stateless = true;
    let mut plain = fast.clone();
    plain.fast_path = false;
    [fast, plain, HttpOptions::default()]
}

/// What the server lists is what rmcp's HTTP service checks headers by
/// (`ServerHandler::get_tool`): a flat tool, or a grouped one, with its schema.
#[test]
fn a_mirrored_field_is_listed_with_its_header() {
    use mcp_fusion::rmcp::ServerHandler;
    let server = server();
    let deploy = server.get_tool("deploy").expect("listed");
    let region = &deploy.input_schema["properties"]["region"];
    assert_eq!(
        (&region["type"], &region["x-mcp-header"]),
        (&json!("string"), &json!("Region"))
    );
    let notes = server.get_tool("notes").expect("listed");
    assert_eq!(
        notes.input_schema["properties"]["tenant"]["x-mcp-header"],
        "Tenant"
    );
    let listed = server
        .definitions()
        .find(|d| d.name() == "notes")
        .unwrap()
        .listed(Exposition::Grouped);
    assert_eq!(notes, listed[0]);
    assert_eq!(server.get_tool("nope"), None);
    assert_eq!(server.get_tool("notes.write"), None);
}

#[tokio::test(flavor = "current_thread")]
async fn the_header_is_checked_against_the_body_on_every_path() {
    for options in every_serving() {
        let addr = stateless(server(), options.clone()).await;
        let at = format!(
            "stateless {}, fast path {}",
            options.stateless, options.fast_path
        );
        let hello = json!({"region": "Hello"});
        // Plain, and as Base64 ("Hello").
        answered(
            &call(
                &addr,
                "deploy",
                hello.clone(),
                &[("mcp-param-region", "Hello")],
            )
            .await,
            "Hello x0",
        );
        let wrapped = [("mcp-param-region", "=?base64?SGVsbG8=?=")];
        answered(
            &call(&addr, "deploy", hello.clone(), &wrapped).await,
            "Hello x0",
        );
        // Without the whole wrapper, a value is literal.
        let literal = json!({"region": "SGVsbG8="});
        answered(
            &call(
                &addr,
                "deploy",
                literal,
                &[("mcp-param-region", "SGVsbG8=")],
            )
            .await,
            "SGVsbG8= x0",
        );
        let half = json!({"region": "=?base64?SGVsbG8="});
        let sent = [("mcp-param-region", "=?base64?SGVsbG8=")];
        answered(
            &call(&addr, "deploy", half, &sent).await,
            "=?base64?SGVsbG8= x0",
        );

        // Missing, mismatched, bad Base64 (padding, alphabet).
        let missing = mismatched(&call(&addr, "deploy", hello.clone(), &[]).await);
        assert!(missing.contains("Mcp-Param-Region"), "{at}: {missing}");
        let other = [("mcp-param-region", "World")];
        let said = mismatched(&call(&addr, "deploy", hello.clone(), &other).await);
        assert!(said.contains("does not match"), "{at}: {said}");
        for bad in ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="] {
            let said = mismatched(
                &call(&addr, "deploy", hello.clone(), &[("mcp-param-region", bad)]).await,
            );
            assert!(said.contains("Base64"), "{at}: {said}");
        }

        // A grouped tool's field, for the action that has it; an action without it needs none.
        let write = json!({"action": "write", "tenant": "acme", "text": "hi"});
        let tenant = [("mcp-param-tenant", "acme")];
        answered(
            &call(&addr, "notes", write.clone(), &tenant).await,
            "acme: hi",
        );
        mismatched(&call(&addr, "notes", write, &[]).await);
        answered(
            &call(&addr, "notes", json!({"action": "count"}), &[]).await,
            "0",
        );
    }
}

/// A listed tool's problems as the server's build reports them.
fn refused(tool: ToolDef, exposition: Exposition) -> Vec<String> {
    let built = Server::builder("s", "1")
        .exposition(exposition)
        .tool(Defined(tool))
        .build();
    match built {
        Ok(_) => Vec::new(),
        Err(refused) => refused.problems().to_vec(),
    }
}

fn one(action: mcp_fusion::tools::ActionDefBuilder) -> ToolDef {
    ToolDef::single(action.description("Does it.")).build()
}

fn schema(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

#[test]
fn each_misuse_is_a_build_error_naming_the_fix() {
    /// Optional.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Optional {
        /// The region, if any.
        region: Option<String>,
    }
    let problems = refused(
        one(ActionDef::new::<Optional>("deploy").header("region", "Region")),
        Exposition::Grouped,
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("tool \"deploy\", action \"deploy\": the field \"region\""),
        "{problems:?}"
    );
    assert!(
        problems[0].contains("[\"string\",\"null\"]") && problems[0].contains("#[serde(default)]"),
        "{problems:?}"
    );

    let typed = |ty: Value| {
        let mut arguments = schema(json!({"f": ty}));
        arguments["$defs"] = json!({"Color": {"enum": ["red", "blue"]}});
        let action = ActionDef::with_schema("t", arguments).header("f", "F");
        refused(one(action), Exposition::Grouped)
    };
    for (ty, said) in [
        (json!({"type": "number"}), "of type \"number\""),
        (
            json!({"type": "array", "items": {"type": "string"}}),
            "of type \"array\"",
        ),
        (json!({"$ref": "#/$defs/Color"}), "no single \"type\""),
        (json!({"enum": ["a", "b"]}), "no single \"type\""),
    ] {
        let problems = typed(ty.clone());
        assert!(
            problems.len() == 1 && problems[0].contains(said),
            "{ty}: {problems:?}"
        );
    }
    for ty in ["string", "integer", "boolean"] {
        assert_eq!(typed(json!({"type": ty})), Vec::<String>::new(), "{ty}");
    }

    // Header names: the client scenarios' invalid ones.
    let named = |header: &str| {
        refused(
            one(
                ActionDef::with_schema("t", schema(json!({"f": {"type": "string"}})))
                    .header("f", header),
            ),
            Exposition::Grouped,
        )
    };
    for (header, said) in [
        ("", "is empty"),
        ("My Region", "has a space"),
        ("Region:Name", "has ':'"),
        ("Région", "not ASCII"),
        ("Reg\u{1}ion", "control character"),
    ] {
        let problems = named(header);
        assert!(
            problems.len() == 1 && problems[0].contains(said),
            "{header:?}: {problems:?}"
        );
    }
    let twice = ActionDef::with_schema(
        "t",
        schema(json!({"a": {"type": "string"}, "b": {"type": "string"}})),
    )
    .header("a", "Region")
    .header("b", "region");
    let problems = refused(one(twice), Exposition::Grouped);
    assert!(
        problems.len() == 1 && problems[0].contains("case-insensitive"),
        "{problems:?}"
    );

    // A field the arguments lack, with the closest one.
    let problems = refused(
        one(ActionDef::new::<Deploy>("deploy").header("regoin", "Region")),
        Exposition::Grouped,
    );
    assert!(
        problems.len() == 1 && problems[0].contains("did you mean \"region\""),
        "{problems:?}"
    );

    // Misplaced by hand: in `$defs`, or on the root.
    let nested = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string", "x-mcp-header": "A"}}});
    let problems = refused(
        one(ActionDef::with_schema("t", nested)),
        Exposition::Grouped,
    );
    assert!(
        problems.len() == 1 && problems[0].contains("\"/$defs/A/x-mcp-header\""),
        "{problems:?}"
    );
    let root = json!({"type": "object", "properties": {}, "x-mcp-header": "A"});
    let problems = refused(one(ActionDef::with_schema("t", root)), Exposition::Grouped);
    assert!(
        problems.len() == 1 && problems[0].contains("\"/x-mcp-header\""),
        "{problems:?}"
    );
}

#[test]
fn a_grouped_tool_declares_a_mirrored_field_alike_in_every_action() {
    let field = |description: &str| {
        schema(json!({"region": {"type": "string", "description": description}}))
    };
    let group = |second: mcp_fusion::tools::ActionDefBuilder| {
        ToolDef::new("ops")
            .description("Operations.")
            .action(
                ActionDef::with_schema("deploy", field("Where."))
                    .description("Deploys.")
                    .header("region", "Region"),
            )
            .action(second.description("Undeploys."))
            .build()
    };
    let unmirrored = || ActionDef::with_schema("undeploy", field("Where."));
    let problems = refused(group(unmirrored()), Exposition::Grouped);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains(
            "\"deploy\" mirrors it in the header \"Region\" and \"undeploy\" does not mirror it"
        ),
        "{problems:?}"
    );
    // Flat, each action is a tool of its own.
    assert_eq!(
        refused(group(unmirrored()), Exposition::Flat),
        Vec::<String>::new()
    );
    // Alike: fine.
    let alike = ActionDef::with_schema("undeploy", field("Where.")).header("region", "Region");
    assert_eq!(
        refused(group(alike), Exposition::Grouped),
        Vec::<String>::new()
    );
    // Mirrored alike but described differently: listed as alternatives.
    let described =
        ActionDef::with_schema("undeploy", field("From where.")).header("region", "Region");
    let problems = refused(group(described), Exposition::Grouped);
    assert!(
        problems.len() == 1 && problems[0].contains("same type and doc comment"),
        "{problems:?}"
    );
}

#[test]
fn tool_names_clients_refuse_are_build_errors() {
    let problems = refused(
        one(ActionDef::without_arguments("list invoices")),
        Exposition::Grouped,
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("the tool \"list invoices\": the name has ' '")),
        "{problems:?}"
    );
    let long = "a".repeat(121);
    let tool = ToolDef::new("billing")
        .description("Bills.")
        .action(ActionDef::without_arguments(long.clone()).description("Long."))
        .action(ActionDef::without_arguments("ok").description("Fine."))
        .build();
    let problems = refused(tool, Exposition::Flat);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let expected = format!(
        "the flat tool \"billing_{long}\" (action \"billing.{long}\"): the name is 129 characters long, over 128"
    );
    assert!(problems[0].starts_with(&expected), "{problems:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn tools_list_is_the_same_each_time_in_the_order_tools_were_added() {
    let addr = stateless(server(), every_serving()[0].clone()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let mut seen = Vec::new();
    for _ in 0..3 {
        let reply = raw_http::post(&addr, &[], list.to_string().as_bytes()).await;
        seen.push(reply.message()["result"].clone());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    let names: Vec<&str> = (seen[0]["tools"].as_array().unwrap().iter())
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["deploy", "notes"]);
}

/// An upstream written with rmcp that lists a tool under a name clients refuse, and one
/// mirroring a field in a header; each call answers its arguments.
#[derive(Clone)]
struct Upstream;

impl mcp_fusion::rmcp::ServerHandler for Upstream {
    fn get_info(&self) -> mcp_fusion::rmcp::model::ServerConfig {
        use mcp_fusion::rmcp::model::{ServerCapabilities, ServerConfig};
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<mcp_fusion::rmcp::model::PaginatedRequestParams>,
        _: mcp_fusion::rmcp::service::RequestContext<mcp_fusion::rmcp::RoleServer>,
    ) -> Result<mcp_fusion::rmcp::model::ListToolsResult, mcp_fusion::rmcp::ErrorData> {
        use mcp_fusion::rmcp::model::{ListToolsResult, Tool};
        let tool = |name: &str, properties: Value| {
            let schema = schema(properties).as_object().cloned().unwrap();
            Tool::new(name.to_owned(), "A tool.", schema)
        };
        let region = json!({"region": {"type": "string", "x-mcp-header": "Region"}});
        Ok(ListToolsResult::with_all_items(vec![
            tool("zeta", json!({})),
            tool("bad name", json!({})),
            tool("alpha", region),
        ]))
    }

    async fn call_tool(
        &self,
        request: mcp_fusion::rmcp::model::CallToolRequestParams,
        _: mcp_fusion::rmcp::service::RequestContext<mcp_fusion::rmcp::RoleServer>,
    ) -> Result<mcp_fusion::rmcp::model::CallToolResponse, mcp_fusion::rmcp::ErrorData> {
        use mcp_fusion::rmcp::model::{CallToolResult, ContentBlock};
        let text = Value::Object(request.arguments.unwrap_or_default()).to_string();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// A gateway lists an upstream's tools in the upstream's order, the same each time, leaves out
/// the one whose listed name clients refuse, and checks the header of a field the upstream
/// mirrors.
#[tokio::test(flavor = "current_thread")]
async fn a_gateway_lists_upstream_tools_alike_each_time_and_checks_their_headers() {
    use mcp_fusion::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use mcp_fusion::rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let service = StreamableHttpService::new(
        || Ok(Upstream),
        std::sync::Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = axum::Router::new().nest_service("/mcp", service);
    let upstream = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let gateway = Server::builder("gateway", "1")
        .tool(DeployTool)
        .mount("up", mcp_fusion::server::gateway::Upstream::http(&url))
        .build()
        .expect("the gateway builds");
    let addr = stateless(gateway, every_serving()[0].clone()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let mut seen = Vec::new();
    for _ in 0..3 {
        let reply = raw_http::post(&addr, &[], list.to_string().as_bytes()).await;
        seen.push(reply.message()["result"].clone());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    let names: Vec<&str> = (seen[0]["tools"].as_array().unwrap().iter())
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["deploy", "up_zeta", "up_alpha"]);

    let eu = json!({"region": "eu"});
    mismatched(&call(&addr, "up_alpha", eu.clone(), &[]).await);
    mismatched(&call(&addr, "up_alpha", eu.clone(), &[("mcp-param-region", "us")]).await);
    answered(
        &call(&addr, "up_alpha", eu, &[("mcp-param-region", "eu")]).await,
        r#"{"region":"eu"}"#,
    );
    upstream.abort();
}
