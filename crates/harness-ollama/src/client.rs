//! The client: one type for both APIs.

use std::hash::{BuildHasher, RandomState};
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use serde_json::{Value, json};

use crate::Error;
use crate::address::ServerUrl;
use crate::config::{
    Api, Config, FALLBACK_CONTEXT_LENGTH, RepeatedOutput, ReplyFormat, TextToolCalls,
};
use crate::constrained;
use crate::error::{Limit, server_message};
use crate::message::Message;
use crate::ollama;
use crate::openai;
use crate::recover;
use crate::response::{ChatResponse, ConstraintSupport, ModelInfo};
use crate::stream::{ChatFormat, ChatStream};
use crate::transport::{
    Failure, HttpRequest, HttpResponse, Method, Transport, UreqTransport, read_failure,
};

/// The most of a non-streamed body read: model listings and error messages are far smaller.
const MAX_BODY_BYTES: u64 = 8 * 1024 * 1024;

/// How often a request is sent again at once when its connection closed before any answer.
///
/// A kept-alive connection may have been closed by the server just as it was reused:
/// llama.cpp's server closes one after a streamed answer, without saying so. Nothing was
/// answered, so sending again on a fresh connection is safe, as curl and browsers do.
const MAX_RESENDS_AFTER_DISCONNECT: u32 = 2;

/// The most installed models asked about their capabilities to explain a refusal.
const MAX_MODELS_EXAMINED: usize = 32;

/// The tokens a probe of constrained replies may generate: enough to see how a reply begins.
const PROBE_TOKENS: u32 = 8;

/// A client of one model server, speaking one [`Api`], for one model.
///
/// It holds one HTTP agent, so connections are reused across requests, and it may be
/// shared between threads.
#[derive(Debug)]
pub struct Client {
    config: Config,
    server: ServerUrl,
    transport: Box<dyn Transport>,
    /// The context length sent with every Ollama request, settled by the first that needs it.
    context_length: OnceLock<u32>,
    /// Whether the server refused a field outside the OpenAI API, so none are sent again.
    extensions_refused: AtomicBool,
}

impl Client {
    /// A client for `config`; nothing is sent until the first request.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidAddress`] when `config.host` cannot be understood.
    pub fn new(config: Config) -> Result<Client, Error> {
        let server = ServerUrl::parse(config.api, &config.host)?;
        let transport = UreqTransport::new(
            config.connect_timeout,
            server.is_local(),
            config.api_key.as_deref(),
        );
        Ok(Client::with_transport(config, server, Box::new(transport)))
    }

    fn with_transport(config: Config, server: ServerUrl, transport: Box<dyn Transport>) -> Client {
        Client {
            config,
            server,
            transport,
            context_length: OnceLock::new(),
            extensions_refused: AtomicBool::new(false),
        }
    }

    /// The configuration the client was made with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The server's base URL, as understood from [`Config::host`], e.g.
    /// `http://127.0.0.1:11434`.
    pub fn base_url(&self) -> &str {
        self.server.root()
    }

    /// Sends the conversation and the tools offered, and streams the answer.
    ///
    /// Text is passed to `on_text` piece by piece as it arrives; the tool calls, the reason
    /// the model stopped, and token counts come with the complete [`ChatResponse`]. `tools`
    /// are JSON tool definitions, passed to the server unchanged; for both APIs they take
    /// the shape `{"type": "function", "function": {"name", "description", "parameters"}}`.
    /// With [`ReplyFormat::Constrained`] they are described in the system message instead,
    /// and the reply is constrained to one call of one of them or a final answer.
    ///
    /// An answer that keeps repeating the same text is cut while it streams and returned
    /// with [`FinishReason::Repetition`](crate::FinishReason::Repetition), unless
    /// [`Config::repeated_output`] allows it.
    ///
    /// With the Ollama API, the first call asks `/api/show` for the model's context length
    /// unless [`Config::context_length`] is set; see [`Client::context_length`].
    ///
    /// # Errors
    ///
    /// Any [`Error`]; nothing is retried once the answer has begun to stream.
    pub fn chat(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: impl FnMut(&str),
    ) -> Result<ChatResponse, Error> {
        self.chat_with(&self.config, messages, tools, on_text)
    }

    /// Like [`Client::chat`], sampled differently, for asking again after an answer that
    /// could not be used: at a low temperature a model asked the same thing answers the
    /// same way, so the `resample`-th retry raises the temperature by
    /// [`Client::RESAMPLE_STEP`] a time (from [`Config::temperature`], or 0.2 when unset; at
    /// most 1.0) and sends a seed drawn afresh for each request. `resample` 0 is
    /// [`Client::chat`].
    ///
    /// The seed is drawn, not numbered: with the seed set to `resample`, every task's
    /// second attempt drew the same way from much the same prompt, and answered much the
    /// same. (Measured with Qwen2.5-Coder-1.5B: the second attempt's first request, at seed
    /// 1, announced "I will look into the issue and make necessary changes…" with no code in
    /// 4 of 4 tasks replayed, and so ended the attempt; at seeds 2 and 3 the same requests
    /// were answered with code in 7 of 8.)
    ///
    /// # Errors
    ///
    /// As [`Client::chat`].
    pub fn chat_resampled(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: impl FnMut(&str),
        resample: u32,
    ) -> Result<ChatResponse, Error> {
        if resample == 0 {
            return self.chat(messages, tools, on_text);
        }
        let mut config = self.config.clone();
        config.temperature = Some(resampled_temperature(config.temperature, resample));
        config.seed = Some(fresh_seed());
        self.chat_with(&config, messages, tools, on_text)
    }

    /// Like [`Client::chat_resampled`], the answer allowed `max_output_tokens` tokens in
    /// place of [`Config::max_output_tokens`]: a caller that knows how long an answer must
    /// be (a whole file written back) sizes the limit to it, so that the answer is not cut
    /// at a limit set for the answers in general.
    ///
    /// # Errors
    ///
    /// As [`Client::chat`].
    pub fn chat_within(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: impl FnMut(&str),
        resample: u32,
        max_output_tokens: u32,
    ) -> Result<ChatResponse, Error> {
        let mut config = self.config.clone();
        if resample > 0 {
            config.temperature = Some(resampled_temperature(config.temperature, resample));
            config.seed = Some(fresh_seed());
        }
        config.max_output_tokens = Some(max_output_tokens);
        self.chat_with(&config, messages, tools, on_text)
    }

    /// How much each retry of [`Client::chat_resampled`] raises the temperature.
    ///
    /// A small step: a small model's answers get worse fast as the temperature rises, and
    /// the seed alone already draws another answer. (Measured with Qwen2.5-Coder-1.5B on
    /// the task suite, one attempt per task, every request at one temperature and a random
    /// seed: at 0.2, 3 of 16 tasks solved and 5 answers that changed nothing; at 0.5, 1
    /// solved, 1 more verified but failing its holdout, and 7 that changed nothing; at 0.8,
    /// none solved and 8 that changed nothing, most of them saying the fix was made without
    /// showing it. With a step of 0.3 a run's later attempts were asked at 0.5 and 0.8.)
    pub const RESAMPLE_STEP: f64 = 0.1;

    fn chat_with(
        &self,
        config: &Config,
        messages: &[Message],
        tools: &[Value],
        mut on_text: impl FnMut(&str),
    ) -> Result<ChatResponse, Error> {
        let mut response = self.chat_as_sent(config, messages, tools, &mut on_text)?;
        let constrained = config.reply_format == ReplyFormat::Constrained
            && constrained::read_reply(&mut response, tools);
        if !constrained
            && response.tool_calls.is_empty()
            && self.config.text_tool_calls == TextToolCalls::Recover
        {
            let offered = recover::tool_names(tools);
            response.tool_calls = recover::tool_calls_in_text(&response.content, &offered);
        }
        Ok(response)
    }

    /// Finds out whether the server constrains replies to a JSON schema, so a caller can
    /// choose [`ReplyFormat::Constrained`].
    ///
    /// It sends one tiny constrained chat (a few tokens, with the settings of every chat, so
    /// Ollama does not reload the model): the server may refuse it, or take it and ignore the
    /// schema (its reply then is not JSON), or constrain the reply.
    ///
    /// # Errors
    ///
    /// Any [`Error`] other than the refusal, which is [`ConstraintSupport::Refused`].
    pub fn probe_constrained_replies(&self) -> Result<ConstraintSupport, Error> {
        let mut config = self.config.clone();
        config.reply_format = ReplyFormat::Constrained;
        config.max_output_tokens = Some(PROBE_TOKENS);
        config.repeated_output = RepeatedOutput::Allow;
        let messages = [Message::user("Say hello.")];
        match self.chat_as_sent(&config, &messages, &[], &mut |_| {}) {
            Ok(response) if response.content.trim_start().starts_with('{') => {
                Ok(ConstraintSupport::Supported)
            }
            Ok(response) => Ok(ConstraintSupport::Ignored {
                reply: response.content,
            }),
            Err(Error::ConstrainedRepliesRefused { message, .. }) => {
                Ok(ConstraintSupport::Refused { message })
            }
            Err(error) => Err(error),
        }
    }

    /// What the server says about the configured model: its context length and
    /// capabilities.
    ///
    /// Ollama answers from `/api/show`. An OpenAI-compatible server is asked `/v1/models`
    /// and, for llama.cpp's `llama-server`, `/props`, whose context length (the one the
    /// server was started with) wins and which says whether the chat template takes tools.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; from Ollama, [`Error::ModelNotFound`] when the model is not installed.
    pub fn model_info(&self) -> Result<ModelInfo, Error> {
        let info = self.ask_model_info()?;
        // Asked once: [`Client::context_length`] need not ask again.
        self.settle_context_length(info.context_length);
        Ok(info)
    }

    /// [`Client::model_info`], from the server, every time.
    fn ask_model_info(&self) -> Result<ModelInfo, Error> {
        match self.config.api {
            Api::Ollama => self.show(&self.config.model, Purpose::Ask),
            Api::OpenAi => {
                let models = self.served_models(Purpose::Ask)?;
                let model = &self.config.model;
                // llama-server serves one model whatever it is called: take it.
                let entry = match models.iter().find(|served| &served.id == model) {
                    Some(entry) => Some(entry),
                    None if models.len() == 1 => models.first(),
                    None => None,
                };
                let props = self
                    .fetch(Method::Get, openai::PROPS, None, Purpose::Listing)
                    .map(|body| openai::server_props(&body))
                    .unwrap_or_default();
                // llama.cpp says whether the template takes tools; say it as Ollama does.
                let capabilities = match props.supports_tools {
                    Some(true) => vec!["completion".to_owned(), "tools".to_owned()],
                    Some(false) => vec!["completion".to_owned()],
                    None => Vec::new(),
                };
                Ok(ModelInfo {
                    name: model.clone(),
                    context_length: props
                        .context_length
                        .or(entry.and_then(|e| e.context_length)),
                    capabilities,
                })
            }
        }
    }

    /// The context length, in tokens, this client works with; the caller should budget
    /// its prompts to fit.
    ///
    /// It is [`Config::context_length`] or else the model's own (see
    /// [`Client::model_info`]), or else [`FALLBACK_CONTEXT_LENGTH`], and never more than
    /// [`Config::max_context_length`]. It is settled on the first call and then kept, so
    /// the client and the server agree for the whole conversation. Ollama is sent it with
    /// every chat; an OpenAI-compatible server has its own, fixed when it started, which
    /// this reports.
    ///
    /// # Errors
    ///
    /// Those of [`Client::model_info`], when it is asked.
    pub fn context_length(&self) -> Result<u32, Error> {
        if let Some(length) = self.context_length.get() {
            return Ok(*length);
        }
        let told = match self.config.context_length {
            Some(_) => None,
            None => self.ask_model_info()?.context_length,
        };
        Ok(self.settle_context_length(told))
    }

    /// Settles the context length unless it is settled already: the configured one, else
    /// `told` (the model's own), else [`FALLBACK_CONTEXT_LENGTH`]; at most the configured
    /// maximum.
    fn settle_context_length(&self, told: Option<u32>) -> u32 {
        let wanted = self
            .config
            .context_length
            .or(told)
            .unwrap_or(FALLBACK_CONTEXT_LENGTH);
        *self
            .context_length
            .get_or_init(|| wanted.min(self.config.max_context_length))
    }

    /// The names of the models the server has: Ollama's `/api/tags`, or `/v1/models`.
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn list_models(&self) -> Result<Vec<String>, Error> {
        self.model_names(Purpose::Ask)
    }

    /// The server's version: Ollama's `/api/version`; `None` for the OpenAI-compatible API,
    /// which has no such endpoint.
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn version(&self) -> Result<Option<String>, Error> {
        match self.config.api {
            Api::Ollama => {
                let body = self.fetch(Method::Get, ollama::VERSION, None, Purpose::Ask)?;
                ollama::version(&body)
                    .map(Some)
                    .map_err(|detail| self.bad_response(ollama::VERSION, detail))
            }
            Api::OpenAi => Ok(None),
        }
    }

    /// Sends a chat with `config`'s settings and returns the answer as the server gave it:
    /// neither constrained replies nor calls written as text are read yet.
    fn chat_as_sent(
        &self,
        config: &Config,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, Error> {
        let outcome = match config.api {
            Api::Ollama => {
                let body = ollama::chat_body(config, self.context_length()?, messages, tools);
                self.stream_chat::<ollama::Chunks>(config, ollama::CHAT, &body, on_text)
            }
            Api::OpenAi => {
                let mut body = openai::chat_body(config, messages, tools);
                if self.extensions_refused.load(Ordering::Relaxed) {
                    openai::remove_extensions(&mut body);
                }
                match self.stream_chat::<openai::Chunks>(config, openai::CHAT, &body, on_text) {
                    // A strict server refuses a field it does not know before it answers:
                    // ask again without those, and stop sending them.
                    Err(Error::Status {
                        status: 400 | 422,
                        message,
                        ..
                    }) if openai::names_an_extension(&message)
                        && openai::remove_extensions(&mut body) =>
                    {
                        self.extensions_refused.store(true, Ordering::Relaxed);
                        self.stream_chat::<openai::Chunks>(config, openai::CHAT, &body, on_text)
                    }
                    other => other,
                }
            }
        };
        match outcome {
            Err(Error::Status {
                url,
                status,
                message,
            }) if config.reply_format == ReplyFormat::Constrained
                && constrained::is_refusal(status, &message) =>
            {
                Err(Error::ConstrainedRepliesRefused { url, message })
            }
            other => other,
        }
    }

    /// Posts a chat request to `path` and decodes the streamed answer in `F`'s format.
    fn stream_chat<F: ChatFormat>(
        &self,
        config: &Config,
        path: &str,
        body: &Value,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, Error> {
        let url = self.server.endpoint(path);
        let http = self.send(Method::Post, &url, Some(body), Purpose::Ask)?;
        let mut stream = ChatStream::<F>::new(&url, config.repeated_output, config.reply_limits);
        // When the stream breaks off (the answer fell into a loop), the response is dropped
        // unread, which closes the connection: that is how a server learns to stop generating.
        self.read_body(&url, http, |bytes| stream.feed(bytes, on_text))?;
        stream.finish(on_text)
    }

    fn show(&self, model: &str, purpose: Purpose) -> Result<ModelInfo, Error> {
        let request = json!({"model": model});
        let body = self.fetch(Method::Post, ollama::SHOW, Some(&request), purpose)?;
        ollama::model_info(model, &body).map_err(|detail| self.bad_response(ollama::SHOW, detail))
    }

    fn served_models(&self, purpose: Purpose) -> Result<Vec<openai::ServedModel>, Error> {
        let body = self.fetch(Method::Get, openai::MODELS, None, purpose)?;
        openai::served_models(&body).map_err(|detail| self.bad_response(openai::MODELS, detail))
    }

    fn model_names(&self, purpose: Purpose) -> Result<Vec<String>, Error> {
        match self.config.api {
            Api::Ollama => {
                let body = self.fetch(Method::Get, ollama::TAGS, None, purpose)?;
                ollama::model_names(&body).map_err(|detail| self.bad_response(ollama::TAGS, detail))
            }
            Api::OpenAi => Ok(self
                .served_models(purpose)?
                .into_iter()
                .map(|served| served.id)
                .collect()),
        }
    }

    /// The installed models that report tool support (Ollama only; best effort).
    fn models_with_tools(&self) -> Vec<String> {
        if self.config.api != Api::Ollama {
            return Vec::new();
        }
        let names = self.model_names(Purpose::Listing).unwrap_or_default();
        names
            .into_iter()
            .take(MAX_MODELS_EXAMINED)
            .filter(|name| {
                self.show(name, Purpose::Listing)
                    .is_ok_and(|info| info.supports_tools() == Some(true))
            })
            .collect()
    }

    /// Requests `path` and reads the whole (small) body of a successful answer.
    fn fetch(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        purpose: Purpose,
    ) -> Result<Vec<u8>, Error> {
        let url = self.server.endpoint(path);
        let response = self.send(method, &url, body, purpose)?;
        let mut bytes = Vec::new();
        self.read_body(&url, response, |piece| {
            bytes.extend_from_slice(piece);
            if bytes.len() as u64 > MAX_BODY_BYTES {
                return Err(Error::ReplyTooLarge {
                    url: url.clone(),
                    limit: Limit::Body(MAX_BODY_BYTES),
                });
            }
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(bytes)
    }

    /// Sends a request, retrying the failures that come before any answer (a refused
    /// connection or `503` with backoff, a closed connection at once), and returns a
    /// response with a success status.
    fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        purpose: Purpose,
    ) -> Result<HttpResponse, Error> {
        let body = body.map(|value| value.to_string().into_bytes());
        let mut retries = 0;
        let mut resends = 0;
        loop {
            let outcome = self.transport.send(HttpRequest {
                method,
                url: url.to_owned(),
                body: body.clone(),
                idle_timeout: self.config.idle_timeout,
                total_timeout: self.config.total_timeout,
            });
            if matches!(outcome, Err(Failure::Disconnected))
                && resends < MAX_RESENDS_AFTER_DISCONNECT
            {
                resends += 1;
                continue;
            }
            let retryable = match &outcome {
                Err(failure) => *failure == Failure::Refused,
                Ok(response) => response.status == 503,
            };
            if retryable && retries < self.config.retry.max_retries {
                thread::sleep(self.config.retry.backoff(retries));
                retries += 1;
                continue;
            }
            let response =
                outcome.map_err(|failure| self.failure_error(url, failure, Stage::Request))?;
            if (200..300).contains(&response.status) {
                return Ok(response);
            }
            return Err(self.status_error(url, purpose, response));
        }
    }

    /// Reads a body to its end, or until `take` breaks, handing each piece to `take`.
    fn read_body(
        &self,
        url: &str,
        mut response: HttpResponse,
        mut take: impl FnMut(&[u8]) -> Result<ControlFlow<()>, Error>,
    ) -> Result<(), Error> {
        let mut buffer = vec![0; 16 * 1024];
        loop {
            match response.body.read(&mut buffer) {
                Ok(0) => return Ok(()),
                Ok(read) => {
                    if take(&buffer[..read])?.is_break() {
                        return Ok(());
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    return Err(self.failure_error(url, read_failure(error), Stage::Body));
                }
            }
        }
    }

    fn failure_error(&self, url: &str, failure: Failure, stage: Stage) -> Error {
        let url = url.to_owned();
        match (failure, stage) {
            (Failure::Refused, _) => Error::ConnectionRefused {
                api: self.config.api,
                url: self.server.root().to_owned(),
            },
            (Failure::IdleTimeout, _) => Error::IdleTimeout {
                url,
                timeout: self.config.idle_timeout,
            },
            (Failure::TotalTimeout, _) => Error::TotalTimeout {
                url,
                timeout: self.config.total_timeout,
            },
            (Failure::Disconnected, Stage::Request) => Error::Unreachable {
                url,
                detail: "the server closed the connection without answering".to_owned(),
            },
            (Failure::Disconnected, Stage::Body) => Error::StreamCut {
                url,
                detail: "the server closed the connection".to_owned(),
            },
            (Failure::Other(detail), Stage::Request) => Error::Unreachable { url, detail },
            (Failure::Other(detail), Stage::Body) => Error::StreamCut { url, detail },
        }
    }

    /// Explains an error status: a missing model or tool support gets its own error (with
    /// the installed models, for the fix), a missing endpoint a hint at the API.
    fn status_error(&self, url: &str, purpose: Purpose, response: HttpResponse) -> Error {
        let status = response.status;
        let mut body = Vec::new();
        // What arrives is enough to explain the error; a failure to read more changes nothing.
        let _ = response.body.take(MAX_BODY_BYTES).read_to_end(&mut body);
        let message = server_message(&body);
        let explain = purpose != Purpose::Listing;
        let model = self.config.model.clone();
        match status {
            404 if explain && names_a_missing_model(&message) => Error::ModelNotFound {
                api: self.config.api,
                installed: self.model_names(Purpose::Listing).unwrap_or_default(),
                model,
            },
            404 => Error::EndpointNotFound {
                api: self.config.api,
                url: url.to_owned(),
                message,
            },
            _ if explain && message.contains("does not support tools") => Error::ToolsUnsupported {
                with_tools: self.models_with_tools(),
                model,
            },
            _ => Error::Status {
                url: url.to_owned(),
                status,
                message,
            },
        }
    }

    fn bad_response(&self, path: &str, detail: String) -> Error {
        Error::BadResponse {
            api: self.config.api,
            url: self.server.endpoint(path),
            detail,
        }
    }
}

/// Why a request is made; it decides how an error status is explained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// A chat, or facts about the configured model: a 404 may mean it is not installed.
    Ask,
    /// Listings made while explaining another error: their own errors are not explained.
    Listing,
}

/// Where a transfer failed: before the response arrived, or while reading its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Request,
    Body,
}

/// True if and only if an error message says that a model is missing, in the words of
/// Ollama (`model "x" not found, try pulling it first`), vLLM or OpenAI (`does not exist`).
fn names_a_missing_model(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("model")
        && (message.contains("not found") || message.contains("does not exist"))
}

/// A seed for one request: random, and another for every call. It stays within 31 bits,
/// which every server takes (llama.cpp reads a 32-bit seed, where all ones means "random").
fn fresh_seed() -> u64 {
    // Each `RandomState` of a thread has its own keys, and the count makes a second draw
    // from equal keys differ too.
    static DRAWN: AtomicU64 = AtomicU64::new(0);
    let draw = DRAWN.fetch_add(1, Ordering::Relaxed);
    RandomState::new().hash_one(draw) & 0x7fff_ffff
}

/// The temperature of the `resample`-th retry: `base` (0.2 when unset) raised by
/// [`Client::RESAMPLE_STEP`] a retry, at most 1.0.
fn resampled_temperature(base: Option<f64>, resample: u32) -> f64 {
    (base.unwrap_or(0.2) + Client::RESAMPLE_STEP * f64::from(resample)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use std::time::Duration;

    use crate::config::Retry;

    type Outcome = Result<(u16, &'static str), Failure>;

    /// A transport that replays scripted outcomes and records the URLs asked for; clones
    /// share the script, so the test keeps one while the client owns another.
    #[derive(Clone, Debug, Default)]
    struct Scripted(Arc<Script>);

    #[derive(Debug, Default)]
    struct Script {
        outcomes: Mutex<VecDeque<Outcome>>,
        urls: Mutex<Vec<String>>,
    }

    impl Scripted {
        fn requests(&self) -> usize {
            self.0.urls.lock().unwrap().len()
        }
    }

    impl Transport for Scripted {
        fn send(&self, request: HttpRequest) -> Result<HttpResponse, Failure> {
            self.0.urls.lock().unwrap().push(request.url);
            let outcome = self.0.outcomes.lock().unwrap().pop_front();
            let (status, body) = outcome.expect("a scripted outcome for every request")?;
            Ok(HttpResponse {
                status,
                body: Box::new(io::Cursor::new(body.as_bytes().to_vec())),
            })
        }
    }

    fn scripted_client(api: Api, retries: u32, outcomes: Vec<Outcome>) -> (Client, Scripted) {
        let scripted = Scripted::default();
        scripted.0.outcomes.lock().unwrap().extend(outcomes);
        let mut config = Config::new(api, "m");
        config.host = "http://h:1".to_owned();
        config.retry = Retry::new(retries, Duration::ZERO, Duration::ZERO);
        config.context_length = Some(4096);
        let server = ServerUrl::parse(api, &config.host).unwrap();
        let client = Client::with_transport(config, server, Box::new(scripted.clone()));
        (client, scripted)
    }

    const DONE: &str = "{\"message\":{\"content\":\"ok\"},\"done\":true}\n";

    #[test]
    fn refused_connections_and_503_are_retried_up_to_the_limit() {
        let outcomes = vec![Err(Failure::Refused), Ok((503, "loading")), Ok((200, DONE))];
        let (client, scripted) = scripted_client(Api::Ollama, 2, outcomes);
        let response = client.chat(&[Message::user("hi")], &[], |_| {}).unwrap();
        assert_eq!(response.content, "ok");
        assert_eq!(scripted.requests(), 3);
    }

    #[test]
    fn the_last_failure_is_reported_once_retries_run_out() {
        let outcomes = vec![Err(Failure::Refused), Err(Failure::Refused)];
        let (client, scripted) = scripted_client(Api::Ollama, 1, outcomes);
        let error = client.chat(&[], &[], |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "no Ollama server at http://h:1: start it with \"ollama serve\" or set OLLAMA_HOST"
        );
        assert_eq!(scripted.requests(), 2);

        let outcomes = vec![Ok((503, "{\"error\":\"loading model\"}")); 2];
        let (client, _) = scripted_client(Api::OpenAi, 1, outcomes);
        let error = client.chat(&[], &[], |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "http://h:1/v1/chat/completions answered 503: loading model"
        );
    }

    #[test]
    fn other_failures_are_not_retried() {
        for failure in [
            Failure::IdleTimeout,
            Failure::TotalTimeout,
            Failure::Other("reset".to_owned()),
        ] {
            let (client, scripted) = scripted_client(Api::Ollama, 3, vec![Err(failure)]);
            assert!(client.chat(&[], &[], |_| {}).is_err());
            assert_eq!(scripted.requests(), 1);
        }
        let (client, scripted) = scripted_client(Api::Ollama, 3, vec![Ok((500, "boom"))]);
        assert!(matches!(
            client.chat(&[], &[], |_| {}),
            Err(Error::Status { status: 500, .. })
        ));
        assert_eq!(scripted.requests(), 1);
    }

    #[test]
    fn a_connection_closed_before_any_answer_is_resent_at_once_twice_at_most() {
        let outcomes = vec![
            Err(Failure::Disconnected),
            Err(Failure::Disconnected),
            Ok((200, DONE)),
        ];
        let (client, scripted) = scripted_client(Api::Ollama, 0, outcomes);
        assert_eq!(client.chat(&[], &[], |_| {}).unwrap().content, "ok");
        assert_eq!(scripted.requests(), 3, "resent although retries are off");

        let (client, scripted) =
            scripted_client(Api::Ollama, 0, vec![Err(Failure::Disconnected); 3]);
        let error = client.chat(&[], &[], |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot reach http://h:1/api/chat: the server closed the connection without answering"
        );
        assert_eq!(scripted.requests(), 3);
    }

    #[test]
    fn a_404_while_listing_is_not_explained_again() {
        // Asked to explain a missing model, the client lists the installed ones; if that
        // listing itself says "model not found", it must not try to explain it in turn.
        let outcomes = vec![
            Ok((404, "{\"error\":\"model \\\"m\\\" not found\"}")),
            Ok((404, "{\"error\":\"model list not found\"}")),
        ];
        let (client, scripted) = scripted_client(Api::Ollama, 0, outcomes);
        let error = client.chat(&[], &[], |_| {}).unwrap_err();
        assert!(
            matches!(&error, Error::ModelNotFound { installed, .. } if installed.is_empty()),
            "{error:?}"
        );
        assert_eq!(scripted.requests(), 2);
    }

    #[test]
    fn a_client_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Client>();
    }

    #[test]
    fn missing_models_are_recognised_in_several_wordings() {
        assert!(names_a_missing_model(
            "model \"x\" not found, try pulling it first"
        ));
        assert!(names_a_missing_model("The model `gpt-9` does not exist"));
        assert!(!names_a_missing_model("404 page not found"));
        assert!(!names_a_missing_model("model is loading"));
    }
}
