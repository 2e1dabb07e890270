//! [`Server`]: a [`Backend`] served over MCP on stdio.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

use crate::Error;
use crate::backend::{Backend, Call, Reply};

/// An MCP server over one [`Backend`]: it lists the backend's tools and hands each call to
/// it.
pub struct Server<B: Backend> {
    backend: Arc<B>,
    name: String,
    version: String,
    instructions: Option<String>,
}

impl<B: Backend> Server<B> {
    /// A server of `backend` that introduces itself to the client as `name` `version`.
    pub fn new(backend: B, name: impl Into<String>, version: impl Into<String>) -> Server<B> {
        Server {
            backend: Arc::new(backend),
            name: name.into(),
            version: version.into(),
            instructions: None,
        }
    }

    /// What the client (and the model behind it) is told about the server at the handshake.
    pub fn instructions(mut self, text: impl Into<String>) -> Server<B> {
        self.instructions = Some(text.into());
        self
    }

    /// Serves on this process's stdin and stdout until the client closes stdin (or stdout
    /// goes away). Blocks.
    ///
    /// # Errors
    ///
    /// [`Error::Runtime`] when the runtime cannot start, [`Error::Handshake`] when the client
    /// never initializes the session, [`Error::Stopped`] when the protocol loop fails.
    pub fn serve_stdio(self) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        runtime.block_on(self.serve(tokio::io::stdin(), tokio::io::stdout()))
    }

    /// Serves on `reader` and `writer` (newline-delimited JSON-RPC) until `reader` ends.
    pub(crate) async fn serve<R, W>(self, reader: R, writer: W) -> Result<(), Error>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let config = self.config();
        let handler = Handler {
            backend: self.backend,
            config,
        };
        let running = match handler.serve((reader, writer)).await {
            Ok(running) => running,
            // The client went away before the handshake: nothing was asked, nothing to do.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(error) => return Err(Error::Handshake(error.to_string())),
        };
        running
            .waiting()
            .await
            .map_err(|error| Error::Stopped(error.to_string()))?;
        Ok(())
    }

    /// What the server says of itself at the handshake: tools, and nothing else.
    fn config(&self) -> ServerConfig {
        let config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(&self.name, &self.version));
        match &self.instructions {
            Some(text) => config.with_instructions(text.clone()),
            None => config,
        }
    }
}

/// The SDK's side of a [`Server`].
struct Handler<B: Backend> {
    backend: Arc<B>,
    config: ServerConfig,
}

impl<B: Backend> ServerHandler for Handler<B> {
    fn get_info(&self) -> ServerConfig {
        self.config.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .backend
            .tools()
            .into_iter()
            .map(|tool| Tool::new(tool.name, tool.description, Arc::new(tool.input_schema)))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let reply = self.dispatch(request, context).await;
        let content = vec![ContentBlock::text(reply.text)];
        Ok(if reply.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

impl<B: Backend> Handler<B> {
    /// Runs the call on a thread of its own, forwarding its progress and the client's
    /// cancellation while it runs, and waits for its reply (after a cancellation too, so
    /// the work has stopped cleanly before the request is over).
    async fn dispatch(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Reply {
        let token = context.meta.get_progress_token();
        let (sender, mut progress) = mpsc::unbounded_channel();
        let (call, cancellation) = Call::new(token.is_some().then_some(sender));
        let backend = Arc::clone(&self.backend);
        let name = request.name.into_owned();
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let mut work = tokio::task::spawn_blocking(move || backend.call(&name, arguments, &call));
        let mut step = 0_u32;
        let mut cancelled = false;
        loop {
            tokio::select! {
                joined = &mut work => {
                    // Progress sent just before the end still goes out, in order.
                    while let Ok(message) = progress.try_recv() {
                        step += 1;
                        notify(&context, token.as_ref(), step, message).await;
                    }
                    return joined.unwrap_or_else(|error| {
                        tracing::error!("a tool call failed inside the harness: {error}");
                        Reply::error(
                            "Error: the harness failed while serving this call (a bug; see its \
                             log on stderr); nothing more is known of what it did",
                        )
                    });
                }
                Some(message) = progress.recv() => {
                    step += 1;
                    notify(&context, token.as_ref(), step, message).await;
                }
                () = context.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    let cancellation = Arc::clone(&cancellation);
                    // A stop may block (it interrupts a command): not on the protocol loop.
                    let _ = tokio::task::spawn_blocking(move || cancellation.cancel()).await;
                }
            }
        }
    }
}

/// Sends the progress notification number `step`, if the client asked for progress.
async fn notify(
    context: &RequestContext<RoleServer>,
    token: Option<&ProgressToken>,
    step: u32,
    message: String,
) {
    let Some(token) = token else { return };
    let param =
        ProgressNotificationParam::new(token.clone(), f64::from(step)).with_message(message);
    if let Err(error) = context.peer.notify_progress(param).await {
        tracing::debug!("a progress notification was not sent: {error}");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc as std_mpsc;
    use std::sync::{Mutex, PoisonError};
    use std::time::Duration;

    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

    use super::*;
    use crate::backend::ToolDef;

    /// A backend whose `wait` tool reports progress, then blocks until the test releases it
    /// or the client cancels it; any other tool fails.
    struct Gate {
        release: Mutex<std_mpsc::Receiver<()>>,
    }

    impl Backend for Gate {
        fn tools(&self) -> Vec<ToolDef> {
            vec![ToolDef::new("wait", "Waits.", json!({"type": "object"})).expect("an object")]
        }

        fn call(&self, name: &str, arguments: Value, call: &Call) -> Reply {
            if name != "wait" {
                return Reply::error(format!("Error: no tool {name}, arguments {arguments}"));
            }
            let (stopped, stop) = std_mpsc::channel();
            call.on_cancel(move || {
                let _ = stopped.send(());
            });
            // One call at a time: the next one reports nothing until this one has ended.
            let release = self.release.lock().unwrap_or_else(PoisonError::into_inner);
            call.progress("step 1");
            call.progress("step 2");
            loop {
                match release.try_recv() {
                    Ok(()) => return Reply::success("released"),
                    // The test is over: the runtime waits for this thread to end.
                    Err(std_mpsc::TryRecvError::Disconnected) => return Reply::success("gone"),
                    Err(std_mpsc::TryRecvError::Empty) => {}
                }
                if stop.recv_timeout(Duration::from_millis(10)).is_ok() {
                    return Reply::success("stopped by the cancellation");
                }
            }
        }
    }

    /// Runs `test` on a runtime like the one [`Server::serve_stdio`] makes.
    fn block_on(test: impl std::future::Future<Output = ()>) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(test);
    }

    /// The client's ends of the two pipes.
    struct Client {
        lines: Lines<BufReader<DuplexStream>>,
        writer: DuplexStream,
    }

    impl Client {
        /// A server of a [`Gate`] on in-memory pipes, initialized; and the gate's release.
        async fn start() -> (Client, std_mpsc::Sender<()>) {
            let (release, gate) = std_mpsc::channel();
            let backend = Gate {
                release: Mutex::new(gate),
            };
            let (writer, server_reader) = tokio::io::duplex(1 << 16);
            let (server_writer, reader) = tokio::io::duplex(1 << 16);
            tokio::spawn(Server::new(backend, "test", "0").serve(server_reader, server_writer));
            let mut client = Client {
                lines: BufReader::new(reader).lines(),
                writer,
            };
            client
                .send(
                    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}}),
                )
                .await;
            assert_eq!(client.next().await["id"], 0);
            client
                .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .await;
            (client, release)
        }

        async fn send(&mut self, message: Value) {
            let mut line = message.to_string();
            line.push('\n');
            self.writer.write_all(line.as_bytes()).await.expect("send");
        }

        async fn next(&mut self) -> Value {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("an answer in time")
                .expect("read")
                .expect("a line");
            serde_json::from_str(&line).expect("JSON")
        }

        async fn call_wait(&mut self, id: u32) {
            self.send(
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "wait", "arguments": {}, "_meta": {"progressToken": "p"}}}),
            )
            .await;
        }
    }

    #[test]
    fn a_blocked_call_leaves_the_loop_serving_and_its_progress_reaches_the_client() {
        block_on(async {
            let (mut client, release) = Client::start().await;
            client.call_wait(1).await;
            let first = client.next().await;
            assert_eq!(first["method"], "notifications/progress", "{first}");
            assert_eq!(first["params"]["progressToken"], "p");
            assert_eq!(first["params"]["progress"], 1.0);
            assert_eq!(first["params"]["message"], "step 1");
            let second = client.next().await;
            assert_eq!(second["params"]["progress"], 2.0);
            assert_eq!(second["params"]["message"], "step 2");
            // The call is blocked, and a ping is still answered.
            client
                .send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
                .await;
            assert_eq!(client.next().await["id"], 2);
            release.send(()).expect("the gate is waiting");
            let done = client.next().await;
            assert_eq!(done["id"], 1);
            assert_eq!(done["result"]["content"][0]["text"], "released");
            assert_eq!(done["result"]["isError"], false);
        });
    }

    #[test]
    fn a_cancellation_stops_the_call_through_its_registered_stop() {
        block_on(async {
            let (mut client, _release) = Client::start().await;
            client.call_wait(1).await;
            assert_eq!(client.next().await["method"], "notifications/progress");
            assert_eq!(client.next().await["method"], "notifications/progress");
            client
                .send(
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 1}}),
                )
                .await;
            // A cancelled request gets no response (the protocol says so), and the call must
            // have stopped for the next one to get the gate.
            client.call_wait(3).await;
            assert_eq!(client.next().await["method"], "notifications/progress");
            assert_eq!(client.next().await["method"], "notifications/progress");
            client
                .send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
                .await;
            assert_eq!(client.next().await["id"], 4);
        });
    }

    #[test]
    fn a_failed_call_is_a_tool_result_with_is_error_and_the_backends_text() {
        block_on(async {
            let (mut client, _release) = Client::start().await;
            client
                .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "nope"}}))
                .await;
            let answer = client.next().await;
            assert!(
                answer.get("error").is_none(),
                "not a protocol error: {answer}"
            );
            assert_eq!(answer["result"]["isError"], true);
            assert_eq!(
                answer["result"]["content"][0]["text"],
                "Error: no tool nope, arguments {}"
            );
            client
                .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
                .await;
            let listed = client.next().await;
            assert_eq!(listed["result"]["tools"][0]["name"], "wait");
            assert_eq!(
                listed["result"]["tools"][0]["inputSchema"],
                json!({"type": "object"})
            );
        });
    }
}
