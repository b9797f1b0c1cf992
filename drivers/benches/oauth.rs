//! What MCP authorization adds to a call: checking its bearer token with the issuer's keys
//! cached, the token already seen (`verify_again`, a client's next call) or not
//! (`verify_first`: header, key lookup, Ed25519 signature, claims, the caller), against the
//! floor of the signature check and claim decoding alone (`jsonwebtoken::decode` with the key
//! in hand), measured in the same run.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use mcp_fusion::server::oauth::{JwtVerifier, TokenVerifier};
use mcp_fusion_drivers::issuer::Issuer;
use serde_json::{Map, Value};

const AUDIENCE: &str = "https://billing.example/mcp";

fn oauth(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let issuer = runtime
        .block_on(Issuer::start())
        .expect("the issuer starts");
    let verifier = JwtVerifier::new(&issuer.url, AUDIENCE).jwks_url(format!("{}/jwks", issuer.url));
    let token = issuer.token(AUDIENCE, "alice", "invoices:read invoices:write");
    // The first check fetches the keys; every one after uses them.
    let caller = runtime
        .block_on(verifier.verify(&token))
        .expect("the token is valid");
    assert_eq!(caller.subject(), "alice");

    // Fresh tokens, more than the verifier keeps: each one's signature is checked.
    let fresh: Vec<String> = (0..10_000)
        .map(|i| issuer.token(AUDIENCE, &format!("user_{i}"), "invoices:read"))
        .collect();
    let mut next = fresh.iter().cycle();

    let mut group = c.benchmark_group("oauth");
    group.bench_function("verify_again", |b| {
        b.iter(|| runtime.block_on(verifier.verify(black_box(&token))))
    });
    group.bench_function("verify_first", |b| {
        b.iter(|| runtime.block_on(verifier.verify(black_box(next.next().expect("cycles")))))
    });
    let key = DecodingKey::from_jwk(&issuer.signing_key().jwk).expect("a decoding key");
    let mut validation = Validation::new(Algorithm::EdDSA);
    validation.set_audience(&[AUDIENCE]);
    validation.set_issuer(&[&issuer.url]);
    group.bench_function("decode_floor", |b| {
        b.iter(|| {
            jsonwebtoken::decode::<Map<String, Value>>(black_box(&token), &key, &validation)
                .expect("valid")
        })
    });
    group.finish();
}

criterion_group!(benches, oauth);
criterion_main!(benches);
