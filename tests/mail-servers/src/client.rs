//! A minimal client for the SMTP and LMTP dialogues the tests hand mail
//! over with: one message, its envelope, each reply checked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

/// Which dialogue: LMTP answers the message once per recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Smtp,
    Lmtp,
}

/// Hands `message` from `from` to `to` over `protocol` at `at`; the error
/// is the first reply that was not the one expected.
pub fn send(
    protocol: Protocol,
    at: SocketAddr,
    from: &str,
    to: &[&str],
    message: &[u8],
) -> Result<(), String> {
    let socket = TcpStream::connect(at).map_err(|e| format!("connect to {at}: {e}"))?;
    let mut reader = BufReader::new(socket.try_clone().map_err(|e| e.to_string())?);
    let mut writer = socket;
    let mut expect = |code: &str| -> Result<(), String> {
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).map_err(|e| e.to_string())?;
            if !line.starts_with(code) {
                return Err(format!("expected {code}: {line}"));
            }
            // The last line of a reply has a space after its code.
            if line.as_bytes().get(3) == Some(&b' ') {
                return Ok(());
            }
        }
    };
    let mut say = |text: &[u8]| writer.write_all(text).map_err(|e| e.to_string());
    expect("220")?;
    let hello = match protocol {
        Protocol::Smtp => "EHLO client.test",
        Protocol::Lmtp => "LHLO client.test",
    };
    let mut steps = vec![
        (hello.to_string(), "250"),
        (format!("MAIL FROM:<{from}>"), "250"),
    ];
    steps.extend(to.iter().map(|r| (format!("RCPT TO:<{r}>"), "250")));
    steps.push(("DATA".to_string(), "354"));
    for (line, code) in steps {
        say(format!("{line}\r\n").as_bytes())?;
        expect(code)?;
    }
    say(message)?;
    say(b"\r\n.\r\n")?;
    let answers = match protocol {
        Protocol::Smtp => 1,
        Protocol::Lmtp => to.len(),
    };
    for _ in 0..answers {
        expect("250")?;
    }
    say(b"QUIT\r\n")?;
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    Ok(())
}
