//! A site on loopback the tests script: each path answers a fixed response,
//! or a sequence of them (the first request gets the first); every request
//! is counted. Plain HTTP, or HTTPS with a chain the test hands it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

/// One scripted answer.
#[derive(Clone)]
pub struct Answer {
    pub status: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn new(status: &'static str, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    pub fn html(body: &str) -> Self {
        Self::new("200 OK", "text/html; charset=utf-8", body)
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

#[derive(Default)]
struct Script {
    answers: HashMap<String, Vec<Answer>>,
    requests: Vec<String>,
}

#[derive(Clone)]
pub struct Site {
    pub address: SocketAddr,
    script: Arc<Mutex<Script>>,
}

impl Site {
    pub async fn start() -> Self {
        Self::serve(None).await
    }

    pub async fn start_tls(tls: rustls::ServerConfig) -> Self {
        Self::serve(Some(tokio_rustls::TlsAcceptor::from(Arc::new(tls)))).await
    }

    async fn serve(tls: Option<tokio_rustls::TlsAcceptor>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let script = Arc::new(Mutex::new(Script::default()));
        let serving = script.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let script = serving.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    match tls {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                answer(stream, script).await;
                            }
                        }
                        None => answer(stream, script).await,
                    }
                });
            }
        });
        Self { address, script }
    }

    /// `path` answers `answers` in turn, the last one again after that.
    pub fn script(&self, path: &str, answers: Vec<Answer>) {
        self.script
            .lock()
            .expect("script")
            .answers
            .insert(path.into(), answers);
    }

    /// The request lines received, in order.
    pub fn requests(&self) -> Vec<String> {
        self.script.lock().expect("script").requests.clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }
}

async fn answer<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, script: Arc<Mutex<Script>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let line = head.lines().next().unwrap_or_default().to_string();
    let path = line.split(' ').nth(1).unwrap_or("/").to_string();
    let found = {
        let mut script = script.lock().expect("script");
        script.requests.push(line);
        script.answers.get_mut(&path).map(|answers| {
            if answers.len() > 1 {
                answers.remove(0)
            } else {
                answers[0].clone()
            }
        })
    };
    let found = found.unwrap_or_else(|| Answer::new("404 Not Found", "text/plain", ""));
    let mut out = format!("HTTP/1.1 {}\r\nConnection: close\r\n", found.status);
    for (name, value) in &found.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", found.body.len()));
    let _ = stream.write_all(out.as_bytes()).await;
    let _ = stream.write_all(&found.body).await;
    let _ = stream.shutdown().await;
}
