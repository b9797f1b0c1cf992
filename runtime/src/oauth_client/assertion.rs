//! The client credentials grant with `private_key_jwt` (RFC 7523 §2.2, SEP-1046; feature
//! `oauth-client-jwt`): the client proves itself with a JWT it signs (`iss` and `sub` its
//! client ID, `aud` the authorization server's issuer, five minutes, a `jti` of its own), with
//! jsonwebtoken's pure-Rust backend. rmcp has this grant only with a C-built crypto backend,
//! so the token request is made here, through the session's own HTTP client (its timeout, no
//! redirect to another origin).

use rmcp::transport::auth::{AuthError, AuthorizationMetadata, OAuthTokenResponse};

use super::requests::Http;

/// What the token request needs.
pub(super) struct Assertion<'a> {
    pub(super) client_id: &'a str,
    pub(super) key_pem: &'a str,
    pub(super) algorithm: jsonwebtoken::Algorithm,
    pub(super) scopes: &'a [String],
    pub(super) resource: &'a str,
}

/// Signs the assertion and asks the token endpoint of `metadata` for a token.
pub(super) async fn exchange(
    http: &Http,
    metadata: &AuthorizationMetadata,
    asked: Assertion<'_>,
) -> Result<OAuthTokenResponse, AuthError> {
    let failed = |why: String| AuthError::ClientCredentialsError(why);
    let audience = metadata
        .issuer
        .as_deref()
        .unwrap_or(&metadata.token_endpoint);
    let key = match asked.algorithm {
        jsonwebtoken::Algorithm::ES256 | jsonwebtoken::Algorithm::ES384 => {
            jsonwebtoken::EncodingKey::from_ec_pem(asked.key_pem.as_bytes())
        }
        jsonwebtoken::Algorithm::EdDSA => {
            jsonwebtoken::EncodingKey::from_ed_pem(asked.key_pem.as_bytes())
        }
        _ => jsonwebtoken::EncodingKey::from_rsa_pem(asked.key_pem.as_bytes()),
    }
    .map_err(|e| {
        failed(format!(
            "the signing key is not a {:?} key: {e}",
            asked.algorithm
        ))
    })?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut jti = [0u8; 16];
    getrandom::fill(&mut jti).map_err(|e| failed(format!("no random jti: {e}")))?;
    let jti = crate::hex::lower(&jti);
    let claims = serde_json::json!({"iss": asked.client_id, "sub": asked.client_id,
        "aud": audience, "iat": now, "exp": now + 300, "jti": jti});
    let header = jsonwebtoken::Header::new(asked.algorithm);
    let assertion = jsonwebtoken::encode(&header, &claims, &key)
        .map_err(|e| failed(format!("the assertion was not signed: {e}")))?;
    let body = {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials")
            .append_pair(
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            )
            .append_pair("client_assertion", &assertion)
            .append_pair("resource", asked.resource);
        if !asked.scopes.is_empty() {
            form.append_pair("scope", &asked.scopes.join(" "));
        }
        form.finish()
    };
    let request = http::Request::post(&metadata.token_endpoint)
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(http::header::ACCEPT, "application/json")
        .body(body.into_bytes())
        .map_err(|e| failed(e.to_string()))?;
    let answer = http
        .timed(request, false)
        .await
        .map_err(|e| failed(format!("the token request failed: {e}")))?;
    if !answer.status().is_success() {
        let said: serde_json::Value = serde_json::from_slice(answer.body()).unwrap_or_default();
        let error = said["error"].as_str().unwrap_or("no error code");
        return Err(failed(format!(
            "the token endpoint answered {}: {error}",
            answer.status()
        )));
    }
    serde_json::from_slice(answer.body()).map_err(|e| failed(format!("not a token response: {e}")))
}
