//! HTTP, behind a small trait: the client decides what to ask and what an answer means; the
//! transport only moves bytes and says, in a few words, how that failed.

use std::fmt;
use std::io::{self, Read};
use std::time::Duration;

use ureq::tls::{RootCerts, TlsConfig};

/// An HTTP request as the client needs it.
#[derive(Debug)]
pub(crate) struct HttpRequest {
    pub(crate) method: Method,
    pub(crate) url: String,
    /// A JSON body, for `POST`.
    pub(crate) body: Option<Vec<u8>>,
    /// The longest wait for the next byte, headers included.
    pub(crate) idle_timeout: Duration,
    /// The longest the whole exchange may take.
    pub(crate) total_timeout: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
}

/// A response whose status and headers arrived; the body is read as it comes.
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) body: Box<dyn Read + Send>,
}

impl fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// How a transfer failed, as far as the client cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Nothing listens at the address.
    Refused,
    /// No byte arrived within the idle timeout.
    IdleTimeout,
    /// The exchange took longer than the total timeout.
    TotalTimeout,
    /// The connection closed before the exchange was over.
    Disconnected,
    /// Anything else, described.
    Other(String),
}

/// Moves one request and its response.
pub(crate) trait Transport: Send + Sync + fmt::Debug {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, Failure>;
}

/// Classifies an error from reading a response body.
pub(crate) fn read_failure(error: io::Error) -> Failure {
    // ureq hands its own errors through `io::Error`; this recovers them.
    failure(ureq::Error::from(error))
}

/// The transport over one `ureq` agent, so connections are reused across requests.
#[derive(Debug)]
pub(crate) struct UreqTransport {
    agent: ureq::Agent,
    authorization: Option<String>,
}

impl UreqTransport {
    /// An agent with the connect timeout that trusts the system's certificates; `local`
    /// servers are reached without any proxy the environment names, as Ollama's own
    /// client does.
    pub(crate) fn new(
        connect_timeout: Duration,
        local: bool,
        api_key: Option<&str>,
    ) -> UreqTransport {
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::PlatformVerifier)
            .build();
        let mut config = ureq::Agent::config_builder()
            .tls_config(tls)
            .timeout_connect(Some(connect_timeout))
            // Error statuses carry the server's message in their body: read them, not fail.
            .http_status_as_error(false)
            .user_agent(concat!("harness-ollama/", env!("CARGO_PKG_VERSION")));
        if local {
            config = config.proxy(None);
        }
        UreqTransport {
            agent: config.build().into(),
            authorization: api_key.map(|key| format!("Bearer {key}")),
        }
    }
}

impl Transport for UreqTransport {
    fn send(&self, request: HttpRequest) -> Result<HttpResponse, Failure> {
        let result = match (request.method, request.body) {
            (Method::Get, _) => self
                .with_headers(self.agent.get(&request.url))
                .config()
                .timeout_per_read(Some(request.idle_timeout))
                .timeout_global(Some(request.total_timeout))
                .build()
                .call(),
            (Method::Post, body) => self
                .with_headers(self.agent.post(&request.url))
                .header("Content-Type", "application/json")
                .config()
                .timeout_per_read(Some(request.idle_timeout))
                .timeout_global(Some(request.total_timeout))
                .build()
                .send(body.unwrap_or_default()),
        };
        let response = result.map_err(failure)?;
        let status = response.status().as_u16();
        Ok(HttpResponse {
            status,
            body: Box::new(response.into_body().into_reader()),
        })
    }
}

impl UreqTransport {
    fn with_headers<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.authorization {
            Some(value) => request.header("Authorization", value),
            None => request,
        }
    }
}

fn failure(error: ureq::Error) -> Failure {
    use ureq::Timeout;
    match error {
        ureq::Error::Io(error) => match error.kind() {
            io::ErrorKind::ConnectionRefused => Failure::Refused,
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => Failure::Disconnected,
            _ => Failure::Other(error.to_string()),
        },
        ureq::Error::Timeout(Timeout::PerRead) => Failure::IdleTimeout,
        ureq::Error::Timeout(Timeout::Global) => Failure::TotalTimeout,
        ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve) => {
            Failure::Other("no connection within the connect timeout".to_owned())
        }
        ureq::Error::HostNotFound => Failure::Other("the host name is not known".to_owned()),
        other => Failure::Other(other.to_string()),
    }
}
