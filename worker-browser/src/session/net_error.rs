//! Chromium's network errors in the framework's words (§3.4: a failure is
//! said in the framework's words, never the runtime's).

/// Why a load failed, for a model to read.
pub fn words(error: &str) -> String {
    let code = error.trim().trim_start_matches("net::");
    let said = match code {
        "ERR_UNSAFE_REDIRECT" => {
            "it redirected to an address the browser does not open (only http and https are opened)"
        }
        "ERR_NAME_NOT_RESOLVED" => "its host name does not resolve",
        "ERR_CONNECTION_REFUSED" => "the site refused the connection",
        "ERR_CONNECTION_RESET" | "ERR_CONNECTION_CLOSED" | "ERR_EMPTY_RESPONSE" => {
            "the site closed the connection without an answer"
        }
        "ERR_TIMED_OUT" | "ERR_CONNECTION_TIMED_OUT" => "the site did not answer in time",
        "ERR_ADDRESS_UNREACHABLE" | "ERR_INTERNET_DISCONNECTED" => "the site cannot be reached",
        "ERR_TOO_MANY_REDIRECTS" => "it redirects in a loop",
        // A certificate error is told by `certificates` before this is
        // asked; a failed handshake is not the certificate's.
        c if c.starts_with("ERR_SSL_") => "the site's secure connection failed to verify",
        "ERR_TUNNEL_CONNECTION_FAILED" | "ERR_PROXY_CONNECTION_FAILED" => {
            "the deployment's egress proxy did not carry the connection"
        }
        "" => "nothing was served",
        _ => return format!("the browser could not load it ({code})"),
    };
    said.to_string()
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn runtime_errors_are_said_in_the_frameworks_words() {
        assert!(words("net::ERR_UNSAFE_REDIRECT").contains("only http and https"));
        assert!(!words("net::ERR_SSL_PROTOCOL_ERROR").contains("ERR_"));
        assert_eq!(
            words("net::ERR_FOO"),
            "the browser could not load it (ERR_FOO)"
        );
    }
}
