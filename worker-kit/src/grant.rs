//! Signed dispatch grants (ARCHITECTURE §4). The daemon makes a key at boot,
//! gives each worker the public half at the handshake and signs a grant for
//! every call; the worker checks it before it acts. What this buys: the bytes
//! executed are the bytes approved, a call is never replayed, and the
//! worker's own log ties every gated execution to its decision. It does not
//! defend against a compromised daemon, which holds the key.

use std::collections::{BTreeSet, HashMap};

use collegium_proto::toolset::v1::{Call, DispatchGrant, GrantClaims};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use prost::Message;

use crate::audit::digest;

/// How long a grant stays good after it is signed: enough for the wire, not
/// enough to hold one back and use it later.
pub const LIFETIME_MS: u64 = 30_000;

/// How many spent call ids a verifier holds before it forgets the expired.
const SWEEP_AT: usize = 4096;

/// The daemon's side: one key per boot.
pub struct GrantSigner {
    /// The boot's private key: held redacted, like every secret (issue 21).
    key: crate::redact::Redacted<SigningKey>,
    boot_id: String,
}

impl GrantSigner {
    pub fn generate(boot_id: &str) -> Self {
        Self {
            key: crate::redact::Redacted::new(SigningKey::generate(&mut rand_core::OsRng)),
            boot_id: boot_id.to_string(),
        }
    }

    /// The public half, as `DescribeRequest.grant_public_key` carries it.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.expose().verifying_key().to_bytes()
    }

    pub fn boot_id(&self) -> &str {
        &self.boot_id
    }

    /// A grant for `call` of `namespace::tool`, approved by `decision_id`
    /// (empty for a tool that does not gate), good until `now_ms` plus
    /// [`LIFETIME_MS`].
    pub fn sign(
        &self,
        namespace: &str,
        call: &Call,
        decision_id: &str,
        now_ms: u64,
    ) -> DispatchGrant {
        let claims = GrantClaims {
            boot_id: self.boot_id.clone(),
            turn_id: call.turn_id.clone(),
            call_id: call.call_id.clone(),
            agent: call.agent.clone(),
            tool: format!("{namespace}::{}", call.tool),
            arguments_sha256: sha256(&call.arguments_json).to_vec(),
            decision_id: decision_id.to_string(),
            expires_unix_ms: now_ms + LIFETIME_MS,
        }
        .encode_to_vec();
        let signature = self.key.expose().sign(&claims).to_bytes().to_vec();
        DispatchGrant { claims, signature }
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

/// Why a worker refused a grant. Each is audited; none reaches the tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantRefusal {
    #[error("the call carries no grant")]
    Missing,
    #[error("no signing key was given at the handshake")]
    NoKey,
    #[error("the grant's signature does not verify")]
    BadSignature,
    #[error("the grant's claims do not decode")]
    Malformed,
    #[error("the grant is from boot {granted}, not this daemon's boot {current}")]
    OtherBoot { granted: String, current: String },
    #[error("the grant is for {field} '{granted}', but the call is for '{called}'")]
    Mismatch {
        field: &'static str,
        granted: String,
        called: String,
    },
    #[error("the arguments are not the bytes the grant was signed for")]
    ArgumentsChanged,
    #[error("the grant expired {late_ms} ms before it arrived")]
    Expired { late_ms: u64 },
    #[error("call {0} was already granted once; a call is never replayed")]
    Replayed(String),
    #[error("this worker does not serve {0}")]
    NotServed(String),
    #[error("{0} gates on a person, and the grant names no decision")]
    NoDecision(String),
}

/// The worker's side: the boot's public key, what it serves, and every call
/// id it has already accepted.
pub struct GrantVerifier {
    namespace: String,
    served: BTreeSet<String>,
    gated: BTreeSet<String>,
    key: Option<(String, VerifyingKey)>,
    /// Spent call ids with their grants' expiry: once a grant has expired it
    /// is refused on that ground, so its id need not be kept.
    seen: HashMap<String, u64>,
}

impl GrantVerifier {
    /// `served` are the tool segments this worker serves; `gated` those that
    /// stop for a person on every call, whose grants must name a decision.
    pub fn new(namespace: &str, served: BTreeSet<String>, gated: BTreeSet<String>) -> Self {
        Self {
            namespace: namespace.to_string(),
            served,
            gated,
            key: None,
            seen: HashMap::new(),
        }
    }

    /// Takes the key a handshake hands over. A new boot's key replaces the
    /// old one: grants of the previous boot are refused from now on.
    pub fn accept_key(&mut self, boot_id: &str, public_key: &[u8]) -> Result<(), String> {
        let bytes: [u8; 32] = public_key
            .try_into()
            .map_err(|_| format!("a public key is 32 bytes, not {}", public_key.len()))?;
        let key = VerifyingKey::from_bytes(&bytes).map_err(|e| e.to_string())?;
        self.key = Some((boot_id.to_string(), key));
        Ok(())
    }

    /// Checks `grant` for `call` at `now_ms`; on success the call id is spent
    /// and the claims are returned for the audit line.
    pub fn check(
        &mut self,
        grant: Option<&DispatchGrant>,
        call: &Call,
        now_ms: u64,
    ) -> Result<GrantClaims, GrantRefusal> {
        let grant = grant.ok_or(GrantRefusal::Missing)?;
        let (boot_id, key) = self.key.as_ref().ok_or(GrantRefusal::NoKey)?;
        let signature =
            Signature::from_slice(&grant.signature).map_err(|_| GrantRefusal::BadSignature)?;
        key.verify(&grant.claims, &signature)
            .map_err(|_| GrantRefusal::BadSignature)?;
        let claims =
            GrantClaims::decode(grant.claims.as_slice()).map_err(|_| GrantRefusal::Malformed)?;
        if claims.boot_id != *boot_id {
            return Err(GrantRefusal::OtherBoot {
                granted: claims.boot_id,
                current: boot_id.clone(),
            });
        }
        let tool = format!("{}::{}", self.namespace, call.tool);
        for (field, granted, called) in [
            ("tool", &claims.tool, &tool),
            ("call", &claims.call_id, &call.call_id),
            ("turn", &claims.turn_id, &call.turn_id),
            ("agent", &claims.agent, &call.agent),
        ] {
            if granted != called {
                return Err(GrantRefusal::Mismatch {
                    field,
                    granted: granted.clone(),
                    called: called.clone(),
                });
            }
        }
        if claims.arguments_sha256 != sha256(&call.arguments_json) {
            return Err(GrantRefusal::ArgumentsChanged);
        }
        if now_ms > claims.expires_unix_ms {
            return Err(GrantRefusal::Expired {
                late_ms: now_ms - claims.expires_unix_ms,
            });
        }
        if !self.served.contains(&call.tool) {
            return Err(GrantRefusal::NotServed(tool));
        }
        if self.gated.contains(&call.tool) && claims.decision_id.is_empty() {
            return Err(GrantRefusal::NoDecision(tool));
        }
        if self.seen.contains_key(&claims.call_id) {
            return Err(GrantRefusal::Replayed(claims.call_id));
        }
        // Swept only when the set has grown: not a walk on every call.
        if self.seen.len() >= SWEEP_AT {
            self.seen.retain(|_, expires| *expires >= now_ms);
        }
        self.seen
            .insert(claims.call_id.clone(), claims.expires_unix_ms);
        Ok(claims)
    }
}

/// Hex digest of a call's argument bytes, for the audit line.
pub fn arguments_digest(call: &Call) -> String {
    digest(&call.arguments_json)
}
