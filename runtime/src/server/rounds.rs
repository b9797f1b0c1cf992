//! The rounds of a 2026-07-28 call that asks its client (SEP-2322): the `requestState` a round
//! ends with, sealed with rmcp's `RequestStateCodec` (HMAC-SHA-256 under the server's secret)
//! and bound to the call (the server, the tool called, a digest of its arguments, the verified
//! caller) and to a lifetime, so that any replica sharing the secret can trust it on the next
//! round without a shared store; each answer it keeps bound to a digest of the question it
//! answers; and its refusal when it was altered, expired, made for another call, or used
//! already here (a state carries one retry: its nonce is recorded as it is opened).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::ErrorData;
use rmcp::model::{
    ElicitRequestParams, ElicitationSchema, InputRequest, InputResponses, RequestStateCodec,
    RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::limits::UsedStates;

/// How long a round's `requestState` is good for by default.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);

/// The most states remembered as used, per process: when that many unexpired states were
/// used, new retries are refused until the oldest expire (never forgotten early).
const MAX_USED: usize = 100_000;

/// An answer of the client, and the digest of the question it answers (none for an answer a
/// call carried without a `requestState`: it answers whatever this run asks under its key).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct Given {
    #[serde(rename = "q", default, skip_serializing_if = "Option::is_none")]
    pub(crate) question: Option<String>,
    #[serde(rename = "a")]
    pub(crate) answer: Value,
}

impl Given {
    /// The answer `answer` to the question of digest `question`.
    pub(crate) fn to(question: String, answer: Value) -> Self {
        Given {
            question: Some(question),
            answer,
        }
    }

    /// An answer bound to no question.
    pub(crate) fn unbound(answer: Value) -> Self {
        Given {
            question: None,
            answer,
        }
    }
}

/// The answers of a call so far, by input key.
pub(crate) type Answers = BTreeMap<String, Given>;

/// What a sealed state holds: a nonce, for telling one round from another; a digest of what
/// binds it to its call (read back to tell a state made for another call from an altered one,
/// which the tag alone cannot); the answers of the rounds before, and the keys this round
/// asked with their questions' digests. The client sends back only this round's answers
/// (SEP-2322: the state is the server's memory between rounds).
#[derive(Serialize, Deserialize)]
struct State {
    nonce: u64,
    bound: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    answers: Answers,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    asked: BTreeMap<String, String>,
}

/// A retried call's state, opened (and spent).
#[derive(Debug)]
pub(crate) struct Opened {
    /// The answers of every round so far: those the state kept, and those the retry carries
    /// for what the last round asked, each bound to its question (an answer to anything else
    /// is ignored).
    pub(crate) answers: Answers,
}

fn digest(binding: &[u8]) -> String {
    crate::hex::lower(&Sha256::digest(binding))
}

/// `value` written with the keys of every object sorted, so that one value is one text.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for item in items {
                canonical(item, out);
                out.push(b',');
            }
            out.push(b']');
        }
        // As serde_json writes it (into a `Vec`, which cannot fail).
        scalar => drop(serde_json::to_writer(&mut *out, scalar)),
    }
}

/// An object of `canonical`, its members in the order of their keys.
fn canonical_object(map: &Map<String, Value>, out: &mut Vec<u8>) {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (key, value) in members {
        drop(serde_json::to_writer(&mut *out, key));
        out.push(b':');
        canonical(value, out);
        out.push(b',');
    }
    out.push(b'}');
}

/// The digest of a question a handler asked: the same in every run that asks the same thing
/// (a URL elicitation's id, new in each run, is not part of the question).
pub(crate) fn question(request: &InputRequest) -> String {
    digest(&form_question(request).unwrap_or_else(|| question_text(request)))
}

/// A question's canonical text: the request as rmcp writes it, without a URL elicitation's id.
fn question_text(request: &InputRequest) -> Vec<u8> {
    let mut asked = serde_json::to_value(request).unwrap_or_default();
    if let Some(params) = asked.get_mut("params").and_then(Value::as_object_mut) {
        params.remove("elicitationId");
    }
    let mut text = Vec::new();
    canonical(&asked, &mut text);
    text
}

/// A form elicitation's `question_text`, written from its parts with its schema's text made
/// once for each schema asked lately (`FORMS`): the schema is most of the text, and rmcp
/// writes one through a copy of it and a tree of values. `None` for any other request, and
/// for a form with a `_meta` (its members are written by `question_text`).
fn form_question(request: &InputRequest) -> Option<Vec<u8>> {
    let InputRequest::Elicitation(asked) = request else {
        return None;
    };
    let ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    } = &asked.params
    else {
        return None;
    };
    if !asked.extensions.is_empty() {
        return None;
    }
    let schema = FORMS.text(requested_schema);
    let mut text = Vec::with_capacity(96 + message.len() + schema.len());
    text.extend_from_slice(br#"{"method":"#);
    drop(serde_json::to_writer(&mut text, &asked.method));
    text.extend_from_slice(br#","params":{"message":"#);
    drop(serde_json::to_writer(&mut text, message));
    text.extend_from_slice(br#","mode":"form","requestedSchema":"#);
    text.extend_from_slice(&schema);
    text.extend_from_slice(b",},}");
    Some(text)
}

/// The canonical texts of the form schemas made lately, newest first: a server asks a few
/// forms, each many times. At most `FORMS_KEPT`, each of at most `FORM_KEPT_BYTES` (a larger
/// one, as an upstream may send, is written each time); a schema is found by equality, so a
/// form whose schema changes from one ask to the next is never given an old text (two that
/// differ only in a bound of `0.0` and one of `-0.0`, equal, share one: the same question).
struct Forms(Mutex<VecDeque<(ElicitationSchema, Arc<[u8]>)>>);

static FORMS: Forms = Forms(Mutex::new(VecDeque::new()));
const FORMS_KEPT: usize = 16;
const FORM_KEPT_BYTES: usize = 8 * 1024;

impl Forms {
    /// `schema`'s canonical text.
    fn text(&self, schema: &ElicitationSchema) -> Arc<[u8]> {
        let forms = || self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, text)) = forms().iter().find(|(kept, _)| kept == schema) {
            return Arc::clone(text);
        }
        let mut text = Vec::new();
        canonical(&serde_json::to_value(schema).unwrap_or_default(), &mut text);
        let text = Arc::<[u8]>::from(text);
        if text.len() <= FORM_KEPT_BYTES {
            let mut forms = forms();
            forms.push_front((schema.clone(), Arc::clone(&text)));
            forms.truncate(FORMS_KEPT);
        }
        text
    }
}

/// The nonces of the states used here, each until its state could no longer be opened.
#[derive(Default)]
struct Used {
    seen: HashSet<u64>,
    /// In the order they were recorded, which is the order they lapse in.
    lapse: VecDeque<(u64, u64)>,
}

impl Used {
    /// Records `nonce` at `now` until `until`, unless it was recorded already or `cap`
    /// unexpired nonces are. Forgetting the lapsed costs one step each, once.
    fn spend(&mut self, nonce: u64, now: u64, until: u64, cap: usize) -> Result<(), Refused> {
        while let Some(&(lapses, old)) = self.lapse.front()
            && lapses <= now
        {
            self.lapse.pop_front();
            self.seen.remove(&old);
        }
        if self.seen.contains(&nonce) {
            return Err(Refused::Used);
        }
        if self.seen.len() >= cap {
            return Err(Refused::Full);
        }
        self.seen.insert(nonce);
        self.lapse.push_back((until, nonce));
        Ok(())
    }
}

/// The rounds of this server's calls.
pub(crate) struct Rounds {
    codec: RequestStateCodec,
    ttl: Duration,
    used: Mutex<Used>,
    cap: usize,
    /// The record every replica shares, when the limit store offers one; else `used`.
    shared: Option<Arc<dyn UsedStates>>,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// Why a round's state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Altered, or not sealed by this server's secret.
    Altered,
    /// Past its lifetime.
    Expired,
    /// Sealed for another call: another server, tool, arguments, caller.
    Foreign,
    /// Used already: a state carries one retry.
    Used,
    /// Too many states in their lifetime were used here to record one more.
    Full,
    /// The record shared by the replicas could not be reached: the state may have run.
    Unrecorded,
}

impl Refused {
    /// The JSON-RPC error (-32602, invalid params) that answers the call: the client, not the
    /// model, made the state, and it is the client that calls again from the start.
    pub(crate) fn into_error(self) -> ErrorData {
        let why = match self {
            Refused::Altered => "its requestState was altered, or is not this server's",
            Refused::Expired => "its requestState expired",
            Refused::Foreign => "its requestState was made for another call",
            Refused::Used => "its requestState was used already",
            Refused::Full => "too many rounds are under way on this server",
            Refused::Unrecorded => "the record of used states cannot be reached now",
        };
        ErrorData::invalid_params(
            format!(
                "This call cannot go on from its last round: {why}. Call the tool again from \
                 the start, without inputResponses or requestState."
            ),
            None,
        )
    }
}

fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// `N` bytes from the operating system's random source.
fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0; N];
    // Without a random source no state can be made safely: better to stop than to guess.
    getrandom::fill(&mut bytes).expect("the operating system's random source");
    bytes
}

/// What binds a state to its call: the server (by name), the tool, a digest of the arguments
/// (their keys sorted at every level, so a client that writes them in another order sends the
/// same call), and the verified caller. Without OAuth there is no caller: the state works for
/// whoever holds it.
pub(crate) fn binding(
    server: &str,
    tool: &str,
    arguments: Option<&Map<String, Value>>,
    subject: Option<&str>,
) -> Vec<u8> {
    let mut arguments_json = Vec::new();
    match arguments {
        Some(arguments) => canonical_object(arguments, &mut arguments_json),
        None => arguments_json.extend_from_slice(b"{}"),
    }
    let mut bound = Vec::new();
    for part in [
        server.as_bytes(),
        tool.as_bytes(),
        &Sha256::digest(&arguments_json),
        subject.unwrap_or("").as_bytes(),
    ] {
        bound.extend_from_slice(&(part.len() as u64).to_be_bytes());
        bound.extend_from_slice(part);
    }
    bound
}

/// The secret a server seals its states with.
#[derive(Clone)]
pub(crate) enum Secret {
    /// One key (rmcp's `rs1` states).
    One(Vec<u8>),
    /// A keyring: every key opens, the active one seals (rmcp's `rs2` states), so that keys
    /// can be rotated without refusing a state in flight.
    Ring {
        active: String,
        keys: Vec<(String, Vec<u8>)>,
    },
}

impl Secret {
    fn codec(&self) -> Result<RequestStateCodec, RequestStateError> {
        match self {
            Secret::One(key) => RequestStateCodec::try_new(key.clone()),
            Secret::Ring { active, keys } => RequestStateCodec::new_with_keyring(
                active.clone(),
                keys.iter().map(|(id, key)| (id.clone(), key.clone())),
            ),
        }
    }
}

impl Rounds {
    /// Rounds sealed with `secret` (each key 32 bytes or more), good for `ttl`, recording the
    /// states used on `shared` when given, else in this process.
    pub(crate) fn new(
        secret: &Secret,
        ttl: Duration,
        shared: Option<Arc<dyn UsedStates>>,
    ) -> Result<Self, String> {
        let codec = secret.codec().map_err(|e| e.to_string())?;
        Ok(Rounds {
            codec,
            ttl,
            used: Mutex::default(),
            cap: MAX_USED,
            shared,
        })
    }

    /// Rounds sealed with a secret of this process's own, from the operating system's random
    /// source: a round answered by another replica is refused.
    pub(crate) fn of_process(ttl: Duration) -> Self {
        Rounds::new(&Secret::One(random::<64>().to_vec()), ttl, None)
            .expect("64 bytes is a long enough secret")
    }

    /// The state a round of the call bound by `binding` ends with, keeping the `answers` given
    /// so far and the keys the round `asked`, each with its question's digest.
    pub(crate) fn seal(
        &self,
        binding: &[u8],
        answers: Answers,
        asked: BTreeMap<String, String>,
    ) -> String {
        let state = State {
            nonce: u64::from_be_bytes(random()),
            bound: digest(binding),
            answers,
            asked,
        };
        let options = SealOptions::new().ttl(self.ttl);
        self.codec
            .seal_json_with(&state, &options)
            .unwrap_or_default()
    }

    /// Opens the state a retried call sent with `responses` and spends it, in one step: the
    /// answers so far, or why it is refused.
    pub(crate) async fn open(
        &self,
        sealed: &str,
        binding: &[u8],
        mut responses: InputResponses,
    ) -> Result<Opened, Refused> {
        let state: State = self.codec.open_json(sealed).map_err(|e| match e {
            RequestStateError::Expired => Refused::Expired,
            _ => Refused::Altered,
        })?;
        if state.bound != digest(binding) {
            return Err(Refused::Foreign);
        }
        match &self.shared {
            Some(shared) => {
                // A state's id: its nonce under its binding, a digest that names no caller.
                let mut id = Sha256::new();
                id.update(state.bound.as_bytes());
                id.update(state.nonce.to_be_bytes());
                match shared.spend(id.finalize().into(), self.ttl).await {
                    Ok(true) => {}
                    Ok(false) => return Err(Refused::Used),
                    Err(why) => {
                        tracing::error!(%why, "the shared record of used round states cannot be reached: a retried round is refused");
                        return Err(Refused::Unrecorded);
                    }
                }
            }
            None => {
                let now = now_ms();
                let until =
                    now.saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX));
                (self.used.lock().unwrap_or_else(PoisonError::into_inner)).spend(
                    state.nonce,
                    now,
                    until,
                    self.cap,
                )?;
            }
        }
        let mut answers = state.answers;
        for (key, question) in state.asked {
            if let Some(answer) = responses.remove(&key) {
                answers.insert(key, Given::to(question, answer));
            }
        }
        Ok(Opened { answers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::future::Future;

    /// One value is one text: keys sorted at every depth, strings and numbers as serde_json
    /// writes them, each member and item followed by a comma (the form states were sealed
    /// with: a change of it would refuse every state sealed before).
    #[test]
    fn the_canonical_text_is_pinned() {
        let value = json!({
            "z": [1, -2.5, 1e300, true, null, {"b": "\u{0001}\"é", "a": []}],
            "a": {"y": {}, "x": "q\\"},
            "é": 18446744073709551615_u64,
        });
        let expected = r#"{"a":{"x":"q\\","y":{},},"z":[1,-2.5,1e+300,true,null,{"a":[],"b":"\u0001\"é",},],"é":18446744073709551615,}"#;
        let mut text = Vec::new();
        canonical(&value, &mut text);
        assert_eq!(String::from_utf8(text).unwrap(), expected);
        let mut bound = Vec::new();
        canonical_object(value.as_object().unwrap(), &mut bound);
        assert_eq!(String::from_utf8(bound).unwrap(), expected);
        assert_eq!(
            binding("s", "t", None, None),
            binding("s", "t", Some(&Map::new()), None)
        );
    }

    /// The elicitation `params` ask.
    fn elicitation(params: ElicitRequestParams) -> InputRequest {
        InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params))
    }

    #[test]
    fn a_url_elicitations_id_is_not_part_of_its_question() {
        let url = |id: &str, url: &str| {
            elicitation(ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: "Sign in".into(),
                url: url.into(),
                elicitation_id: id.into(),
            })
        };
        let asked = question(&url("e1", "https://id.example/a"));
        assert_eq!(asked, question(&url("e2", "https://id.example/a")));
        assert_ne!(asked, question(&url("e1", "https://id.example/b")));
        // The digest of the canonical text without the id.
        let text = br#"{"method":"elicitation/create","params":{"message":"Sign in","mode":"url","url":"https://id.example/a",},}"#;
        assert_eq!(asked, digest(text));
    }

    /// A form's question written from its parts is the text of rmcp's request (held against
    /// rmcp's serialisation), whether its schema's text is made or kept, and a schema kept
    /// does not stand for another.
    #[test]
    fn a_forms_question_is_the_text_of_its_request() {
        use rmcp::model::{ElicitRequest, EnumSchema, RequestMetaObject};
        let form = |message: &str, schema: &ElicitationSchema| {
            elicitation(ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: message.into(),
                requested_schema: schema.clone(),
            })
        };
        let choices = EnumSchema::builder(vec!["a".into(), "\u{e9}\"".into()])
            .untitled()
            .build();
        let schemas = [
            ElicitationSchema::builder().build_unchecked(),
            ElicitationSchema::builder()
                .required_bool("confirm")
                .optional_string_with("reason", |s| s.description("Why\n, \u{1}").max_length(200))
                .required_integer("count", -3, 1 << 40)
                .optional_number("share", 0.0, 1.5)
                .required_enum_schema("pick", choices)
                .description("A form")
                .title("T")
                .build_unchecked(),
        ];
        for schema in &schemas {
            for message in ["Delete \"a\"?\n", "\u{e9}\u{1f600}", ""] {
                let asked = form(message, schema);
                let made = form_question(&asked).unwrap();
                assert_eq!(made, question_text(&asked), "{message:?}");
                assert_eq!(form_question(&asked).unwrap(), made);
                assert_eq!(question(&asked), digest(&made));
            }
        }
        let mut other = schemas[1].clone();
        other.required = Some(vec!["count".into()]);
        let asked = form("m", &other);
        assert_eq!(form_question(&asked).unwrap(), question_text(&asked));
        assert_ne!(question(&asked), question(&form("m", &schemas[1])));
        // A `_meta`, in the params or beside them, is written by the generic path.
        let meta = json!({"progressToken": 1}).as_object().cloned().unwrap();
        let with_meta = elicitation(ElicitRequestParams::FormElicitationParams {
            meta: Some(RequestMetaObject::from(meta)),
            message: "m".into(),
            requested_schema: schemas[1].clone(),
        });
        assert!(form_question(&with_meta).is_none());
        assert_ne!(question(&with_meta), question(&form("m", &schemas[1])));
        let mut beside = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "m".into(),
            requested_schema: schemas[1].clone(),
        });
        (beside.extensions).insert(RequestMetaObject::from(
            json!({"a": 1}).as_object().cloned().unwrap(),
        ));
        let beside = InputRequest::Elicitation(beside);
        assert!(form_question(&beside).is_none());
        assert!(
            String::from_utf8(question_text(&beside))
                .unwrap()
                .contains(r#""_meta":{"a":1,}"#)
        );
    }

    /// The form texts kept stay bounded whatever is asked: at most `FORMS_KEPT`, none larger
    /// than `FORM_KEPT_BYTES` (a flood of schemas, as an upstream may send, churns them).
    #[test]
    fn the_form_texts_kept_are_bounded() {
        let kept = |schema: &ElicitationSchema| {
            let forms = FORMS.0.lock().unwrap_or_else(PoisonError::into_inner);
            assert!(forms.len() <= FORMS_KEPT);
            assert!(forms.iter().all(|(_, text)| text.len() <= FORM_KEPT_BYTES));
            forms.iter().any(|(kept, _)| kept == schema)
        };
        for n in 0..3 * FORMS_KEPT {
            let schema = ElicitationSchema::builder()
                .required_bool(format!("flood-{n}"))
                .build_unchecked();
            FORMS.text(&schema);
            kept(&schema);
        }
        let large = ElicitationSchema::builder()
            .optional_string_with("large", |s| s.description("x".repeat(FORM_KEPT_BYTES)))
            .build_unchecked();
        assert!(FORMS.text(&large).len() > FORM_KEPT_BYTES);
        assert!(!kept(&large));
    }

    fn responses(pairs: &[(&str, Value)]) -> InputResponses {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    /// Rounds under one key, recorded in this process.
    fn sealed_with(key: u8, ttl: Duration) -> Rounds {
        Rounds::new(&Secret::One(vec![key; 32]), ttl, None).unwrap()
    }

    /// Opens a state recorded in this process, which never waits.
    fn open(
        rounds: &Rounds,
        state: &str,
        bound: &[u8],
        responses: InputResponses,
    ) -> Result<Opened, Refused> {
        let mut opening = std::pin::pin!(rounds.open(state, bound, responses));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        match opening.as_mut().poll(&mut context) {
            std::task::Poll::Ready(opened) => opened,
            std::task::Poll::Pending => panic!("a record of this process never waits"),
        }
    }

    fn asked(keys: &[&str]) -> BTreeMap<String, String> {
        keys.iter()
            .map(|k| ((*k).to_owned(), format!("q-{k}")))
            .collect()
    }

    #[test]
    fn a_state_keeps_the_answers_of_earlier_rounds_and_only_those_asked() {
        let rounds = sealed_with(1, DEFAULT_TTL);
        let arguments = json!({"b": [1, {"y": 2, "x": 1}], "a": "z"});
        let bound = binding("desk", "notes.delete", arguments.as_object(), Some("ada"));
        let first = rounds.seal(&bound, Answers::new(), asked(&["elicitation-1"]));
        let answered = responses(&[
            ("elicitation-1", json!({"action": "accept"})),
            ("sampling-9", json!("made up")),
        ]);
        let opened = open(&rounds, &first, &bound, answered).unwrap();
        let accept = Given::to("q-elicitation-1".into(), json!({"action": "accept"}));
        let kept = Answers::from([("elicitation-1".to_owned(), accept)]);
        assert_eq!(opened.answers, kept);
        let second = rounds.seal(&bound, opened.answers, asked(&["sampling-2"]));
        // The same arguments written in another order are the same call.
        let reordered = json!({"a": "z", "b": [1, {"x": 1, "y": 2}]});
        let same = binding("desk", "notes.delete", reordered.as_object(), Some("ada"));
        let more = responses(&[("sampling-2", json!({"model": "m"}))]);
        let opened = open(&rounds, &second, &same, more).unwrap();
        assert_eq!(opened.answers.len(), 2);
        assert_eq!(
            opened.answers["sampling-2"].question.as_deref(),
            Some("q-sampling-2")
        );
    }

    #[test]
    fn a_state_is_refused_when_altered_foreign_used_or_expired() {
        let rounds = sealed_with(1, DEFAULT_TTL);
        let bound = binding("desk", "notes.delete", None, Some("ada"));
        let state = rounds.seal(&bound, Answers::new(), BTreeMap::new());
        let none = InputResponses::new;
        let refusal = |state: &str, bound: &[u8]| open(&rounds, state, bound, none()).unwrap_err();
        let mut altered = state.clone();
        altered.insert(altered.len() / 2, 'x');
        assert_eq!(refusal(&altered, &bound), Refused::Altered);
        let other_secret = sealed_with(2, DEFAULT_TTL);
        let theirs = other_secret.seal(&bound, Answers::new(), BTreeMap::new());
        assert_eq!(refusal(&theirs, &bound), Refused::Altered);
        for foreign in [
            binding("desk", "notes.delete", None, Some("bob")),
            binding(
                "desk",
                "notes.delete",
                json!({"note": "a"}).as_object(),
                Some("ada"),
            ),
            binding("desk", "notes.keep", None, Some("ada")),
            // Another server sharing the secret.
            binding("shelf", "notes.delete", None, Some("ada")),
        ] {
            assert_eq!(refusal(&state, &foreign), Refused::Foreign);
        }
        // Opening spends: the first open is the only one.
        assert!(open(&rounds, &state, &bound, none()).is_ok());
        assert_eq!(refusal(&state, &bound), Refused::Used);

        // Good for 1 ms of the wall clock every replica reads.
        let brief = sealed_with(1, Duration::from_millis(1));
        let state = brief.seal(&bound, Answers::new(), BTreeMap::new());
        let sealed = now_ms();
        while now_ms() <= sealed + 2 {
            std::thread::yield_now();
        }
        let expired = open(&brief, &state, &bound, none()).unwrap_err();
        assert_eq!(expired, Refused::Expired);
    }

    #[test]
    fn a_full_record_refuses_until_its_oldest_lapse_and_forgets_nothing_early() {
        let mut used = Used::default();
        assert_eq!(used.spend(1, 0, 10, 2), Ok(()));
        assert_eq!(used.spend(2, 5, 15, 2), Ok(()));
        // Full: a third is refused, and the first two are still known.
        assert_eq!(used.spend(3, 6, 16, 2), Err(Refused::Full));
        assert_eq!(used.spend(1, 9, 19, 2), Err(Refused::Used));
        assert_eq!(used.spend(2, 9, 19, 2), Err(Refused::Used));
        // Once the first lapsed (its state expired too), there is room again.
        assert_eq!(used.spend(3, 10, 20, 2), Ok(()));
        assert_eq!(used.spend(2, 12, 22, 2), Err(Refused::Used));
        assert_eq!(used.lapse.len(), 2);
    }

    #[test]
    fn nonces_and_secrets_differ_each_time() {
        let bound = binding("desk", "t", None, None);
        let one = Rounds::of_process(DEFAULT_TTL);
        let two = Rounds::of_process(DEFAULT_TTL);
        let state = one.seal(&bound, Answers::new(), BTreeMap::new());
        assert_eq!(
            open(&two, &state, &bound, InputResponses::new()).unwrap_err(),
            Refused::Altered
        );
        let other = one.seal(&bound, Answers::new(), BTreeMap::new());
        assert!(open(&one, &state, &bound, InputResponses::new()).is_ok());
        assert!(open(&one, &other, &bound, InputResponses::new()).is_ok());
    }
}
