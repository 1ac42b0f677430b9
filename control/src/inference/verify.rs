//! Boot verification (§7.3): one minimal completion per configured model
//! before serving. An unauthorized answer refuses boot; an answer that is
//! neither acceptance nor refusal within a short deadline is recorded as
//! unverified, never as verified.

use std::time::Duration;

use super::provider::{CallLimits, Cancel, Provider};
use super::request::{CompletionRequest, Message};
use super::{Failure, FinishReason};

#[derive(Debug, Clone, PartialEq)]
pub enum Verification {
    Verified,
    /// The provider refused the credential: boot must not go on.
    Unauthorized,
    /// The check could not run; the reason, in the framework's words.
    Unverified(String),
}

pub async fn verify(provider: &Provider, deadline: Duration) -> Verification {
    let request = CompletionRequest {
        system: "This is Collegium's boot check. Answer with the single word OK.".into(),
        messages: vec![Message::User("Are you there?".into())],
        max_output_tokens: Some(16),
        ..CompletionRequest::default()
    };
    // The deadline below decides: the call's own limits sit past it, so a
    // provider that says nothing reads as no answer, never as a race
    // between the idle timeout and the deadline.
    let limits = CallLimits {
        idle_timeout: deadline * 2,
        wall_clock: deadline * 2,
    };
    let mut ignore = |_: &super::StreamEvent| {};
    let answer = tokio::time::timeout(
        deadline,
        provider.complete(&request, limits, Cancel::never(), &mut ignore),
    )
    .await;
    match answer {
        Err(_) => Verification::Unverified(no_answer(deadline)),
        // A completion the limit cut short is no answer: nothing accepted it.
        Ok(Ok(completion)) if completion.finish == FinishReason::TimeLimit => {
            Verification::Unverified(no_answer(deadline))
        }
        Ok(Ok(_)) => Verification::Verified,
        // A key refused, or refused this model, is not authorized to serve it.
        Ok(Err(Failure::Credential | Failure::Refused)) => Verification::Unauthorized,
        Ok(Err(failure)) => Verification::Unverified(failure.phrase()),
    }
}

fn no_answer(deadline: Duration) -> String {
    format!("no answer within {:.1} s", deadline.as_secs_f64())
}
