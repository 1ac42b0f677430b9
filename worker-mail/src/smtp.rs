//! Sending one message, step by step, so the worker always knows how far a
//! send got (§3.13, §7.1). A refusal the server answers before the end of
//! DATA (a 550 at RCPT) means nothing was sent: an ordinary result. A
//! connection that fails before the message is handed over sent nothing
//! either. But once the message's final dot is written, only the server's
//! answer says whether it took it: no answer, or the connection cut, leaves
//! the outcome unknown, and the call is unresolved. A send is never tried
//! again.

use std::time::Duration;

use lettre::Address;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, Certificate, TlsParameters};
use lettre::transport::smtp::commands::{Data, Mail, Rcpt};
use lettre::transport::smtp::extension::ClientId;

use crate::settings::{Server, Tls};
use crate::tls::Trust;

/// How long one SMTP step may take.
pub const STEP: Duration = Duration::from_secs(60);

/// How a send ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    /// The server took the message; its answer.
    Accepted(String),
    /// The server refused before taking the message; nothing was sent.
    Refused(String),
    /// Nothing was sent: the server could not be reached or spoken to.
    NotSent(String),
    /// The message was handed over and no answer came: it may have gone.
    Unresolved(String),
}

fn tls_parameters(server: &Server, trust: &Trust) -> Result<TlsParameters, String> {
    let mut builder = TlsParameters::builder(server.host.clone());
    for pem in trust.pems() {
        let certificate =
            Certificate::from_pem(pem).map_err(|e| format!("a --trust certificate: {e}"))?;
        builder = builder.add_root_certificate(certificate);
    }
    builder.build_rustls().map_err(|e| format!("TLS: {e}"))
}

async fn step<T, E: std::fmt::Display>(
    what: &str,
    future: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(STEP, future).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(format!("{what}: {error}")),
        Err(_) => Err(format!("{what}: no answer within {} s", STEP.as_secs())),
    }
}

/// Whether `error` is the server's own negative answer.
fn answered(error: &lettre::transport::smtp::Error) -> bool {
    error.is_permanent() || error.is_transient()
}

/// Sends `message` from `from` to `recipients` through `server`.
pub async fn send(
    server: &Server,
    trust: &Trust,
    from: &Address,
    recipients: &[Address],
    message: &[u8],
) -> Sent {
    let named = server.named();
    let hello = ClientId::Domain(from.domain().to_string());
    let implicit = match server.tls {
        Tls::Implicit => match tls_parameters(server, trust) {
            Ok(parameters) => Some(parameters),
            Err(reason) => return Sent::NotSent(reason),
        },
        Tls::Starttls | Tls::None => None,
    };
    let connecting = AsyncSmtpConnection::connect_tokio1(
        (server.host.as_str(), server.port),
        Some(STEP),
        &hello,
        implicit,
        None,
    );
    let mut connection = match step(&format!("connecting to {named}"), connecting).await {
        Ok(connection) => connection,
        Err(reason) => return Sent::NotSent(reason),
    };
    let sent = converse(
        &mut connection,
        server,
        trust,
        &hello,
        from,
        recipients,
        message,
    )
    .await;
    match &sent {
        Sent::Accepted(_) => {
            let _ = tokio::time::timeout(Duration::from_secs(5), connection.quit()).await;
        }
        _ => connection.abort().await,
    }
    sent
}

async fn converse(
    connection: &mut AsyncSmtpConnection,
    server: &Server,
    trust: &Trust,
    hello: &ClientId,
    from: &Address,
    recipients: &[Address],
    message: &[u8],
) -> Sent {
    let named = server.named();
    if server.tls == Tls::Starttls {
        let parameters = match tls_parameters(server, trust) {
            Ok(parameters) => parameters,
            Err(reason) => return Sent::NotSent(reason),
        };
        if let Err(reason) = step("STARTTLS", connection.starttls(parameters, hello)).await {
            return Sent::NotSent(format!("{named}: {reason}"));
        }
    }
    // A server that offers no login takes mail without one (a loopback
    // relay); one that offers it is always given the mailbox's.
    let mechanisms = [Mechanism::Plain, Mechanism::Login];
    if mechanisms
        .iter()
        .any(|m| connection.server_info().supports_auth_mechanism(*m))
    {
        let credentials = Credentials::new(
            server.username.clone(),
            server.password.expose().to_string(),
        );
        match tokio::time::timeout(STEP, connection.auth(&mechanisms, &credentials)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) if answered(&error) => {
                return Sent::Refused(format!(
                    "{named} refused the login of {}: {error}",
                    server.username
                ));
            }
            Ok(Err(error)) => return Sent::NotSent(format!("{named}: logging in: {error}")),
            Err(_) => return Sent::NotSent(format!("{named}: logging in: no answer")),
        }
    }
    let mail = Mail::new(Some(from.clone()), Vec::new());
    if let Some(stop) = command(connection, "MAIL FROM", mail, &named).await {
        return stop;
    }
    for recipient in recipients {
        let rcpt = Rcpt::new(recipient.clone(), Vec::new());
        if let Some(stop) = command(connection, &format!("RCPT TO {recipient}"), rcpt, &named).await
        {
            return match stop {
                Sent::Refused(reason) => Sent::Refused(format!(
                    "{reason}. The message went to no one: a send goes to every recipient approved or to none"
                )),
                other => other,
            };
        }
    }
    if let Some(stop) = command(connection, "DATA", Data, &named).await {
        return stop;
    }
    // From here the message is on the wire: only the server's answer to
    // its final dot settles whether it was taken.
    match tokio::time::timeout(STEP, connection.message(message)).await {
        Ok(Ok(response)) => Sent::Accepted(response.message().collect::<Vec<_>>().join(" ")),
        Ok(Err(error)) if answered(&error) => Sent::Refused(format!(
            "{named} refused the message after reading it: {error}"
        )),
        Ok(Err(error)) => Sent::Unresolved(format!(
            "the connection to {named} failed while the message was handed over or before the server answered it: {error}"
        )),
        Err(_) => Sent::Unresolved(format!(
            "{named} gave no answer within {} s once the message was handed over",
            STEP.as_secs()
        )),
    }
}

/// A step before the message: a negative answer is the server's refusal,
/// anything else a send that never got as far as the message.
async fn command<C: std::fmt::Display>(
    connection: &mut AsyncSmtpConnection,
    what: &str,
    command: C,
    named: &str,
) -> Option<Sent> {
    match tokio::time::timeout(STEP, connection.command(command)).await {
        Ok(Ok(_)) => None,
        Ok(Err(error)) if answered(&error) => {
            Some(Sent::Refused(format!("{named} refused {what}: {error}")))
        }
        Ok(Err(error)) => Some(Sent::NotSent(format!("{named}: {what}: {error}"))),
        Err(_) => Some(Sent::NotSent(format!(
            "{named}: {what}: no answer within {} s",
            STEP.as_secs()
        ))),
    }
}
