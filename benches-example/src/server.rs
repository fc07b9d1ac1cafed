//! The local model server: an OpenAI-compatible `POST /v1/chat/completions` endpoint on
//! 127.0.0.1, so that the evals exercise the real client, HTTP and JSON included, offline and
//! for free. Behind it, [`NaiveBayes`] trained on the bundled tickets answers with a sampled
//! label, and cl100k_base counts the tokens that the response's `usage` reports.

use std::error::Error;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use rand::Rng;
use serde_json::json;
use tiktoken_rs::CoreBPE;
use tiny_http::{Header, Method, Request, Response, Server};

use crate::model::NaiveBayes;

/// The model name the server answers as.
pub const MODEL: &str = "triage-nb-1";

/// A ticket containing this marker sometimes gets a malformed response ([`GLITCH_RATE`]): a
/// body cut off halfway, as a gateway that drops a connection leaves it. Real endpoints do this
/// now and then; the marker makes it happen on purpose, so that an eval can show an error that
/// is not a wrong answer. A real provider ignores it.
pub const GLITCH_MARKER: &str = "[glitch]";

/// How often a ticket with [`GLITCH_MARKER`] gets a malformed response.
pub const GLITCH_RATE: f64 = 1.0 / 3.0;

/// OpenAI's default when a request names no temperature.
const DEFAULT_TEMPERATURE: f64 = 1.0;

/// Request-handling threads. Evals run on a few test threads at once; more would only wait.
const WORKERS: usize = 2;

/// What a request needs: the classifier, the tokenizer, and a counter for response ids.
struct Model {
    classifier: NaiveBayes,
    tokenizer: &'static CoreBPE,
    responses: AtomicU64,
    /// Every request received, answered or refused: what a replay must bring to zero.
    requests: AtomicU64,
}

/// A running local model server. Stop it with [`LocalModelServer::stop`] (dropping it stops it
/// too).
pub struct LocalModelServer {
    server: Arc<Server>,
    stopping: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
    base_url: String,
    model: Arc<Model>,
}

impl std::fmt::Debug for LocalModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModelServer")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl LocalModelServer {
    /// Trains the model, loads the tokenizer, and starts serving on an ephemeral port of
    /// 127.0.0.1 (port 0: the system picks a free one, so parallel test processes never
    /// collide). Returns once the server accepts requests.
    pub fn start() -> Result<LocalModelServer, Box<dyn Error + Send + Sync>> {
        let classifier = NaiveBayes::bundled()?;
        // The first call in a process parses the bundled vocabulary (a few hundred
        // milliseconds in a debug build); doing it here keeps it out of the first request.
        let tokenizer = tiktoken_rs::cl100k_base_singleton();
        let server = Arc::new(Server::http("127.0.0.1:0")?);
        let port = server
            .server_addr()
            .to_ip()
            .ok_or("the server is not listening on an IP address")?
            .port();
        let model = Arc::new(Model {
            classifier,
            tokenizer,
            responses: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        });
        let stopping = Arc::new(AtomicBool::new(false));
        let workers = (0..WORKERS)
            .map(|index| {
                let (server, model, stopping) = (server.clone(), model.clone(), stopping.clone());
                std::thread::Builder::new()
                    .name(format!("local-model-{index}"))
                    .spawn(move || serve(&server, &model, &stopping))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LocalModelServer {
            server,
            stopping,
            workers,
            base_url: format!("http://127.0.0.1:{port}/v1"),
            model,
        })
    }

    /// How many requests the server has received.
    pub fn requests(&self) -> u64 {
        self.model.requests.load(Ordering::SeqCst)
    }

    /// The OpenAI-style base URL, `http://127.0.0.1:<port>/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Stops serving and waits for the request threads to finish.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Each unblock wakes one waiting worker.
        for _ in &self.workers {
            self.server.unblock();
        }
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

impl Drop for LocalModelServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn serve(server: &Server, model: &Model, stopping: &AtomicBool) {
    loop {
        match server.recv() {
            Ok(request) => handle(model, request),
            Err(_) if stopping.load(Ordering::SeqCst) => return,
            // A connection that failed before it made a request: nothing to answer.
            Err(_) => continue,
        }
    }
}

fn handle(model: &Model, mut request: Request) {
    model.requests.fetch_add(1, Ordering::SeqCst);
    let (status, body) = if request.method() != &Method::Post
        || request.url().split('?').next() != Some("/v1/chat/completions")
    {
        error(
            404,
            format!("no route for {} {}", request.method(), request.url()),
        )
    } else {
        let mut body = String::new();
        match request.as_reader().read_to_string(&mut body) {
            Ok(_) => model.complete(&body),
            Err(e) => error(400, format!("cannot read the request body: {e}")),
        }
    };
    let content_type =
        Header::from_bytes("Content-Type", "application/json").expect("a valid static header");
    let response = Response::from_string(body)
        .with_status_code(status)
        .with_header(content_type);
    // The client may have given up already; there is no one left to tell.
    let _ = request.respond(response);
}

/// An OpenAI-style error body.
fn error(status: u16, message: String) -> (u16, String) {
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    (status, body.to_string())
}

#[derive(serde::Deserialize)]
struct ChatRequest {
    messages: Vec<ChatMessage>,
    temperature: Option<f64>,
}

#[derive(serde::Deserialize)]
struct ChatMessage {
    role: String,
    content: String,
}

impl Model {
    fn tokens(&self, text: &str) -> u64 {
        self.tokenizer.encode_ordinary(text).len() as u64
    }

    fn complete(&self, body: &str) -> (u16, String) {
        let request: ChatRequest = match serde_json::from_str(body) {
            Ok(request) => request,
            Err(e) => return error(400, format!("not a chat-completion request: {e}")),
        };
        let temperature = request.temperature.unwrap_or(DEFAULT_TEMPERATURE);
        if !(0.0..=2.0).contains(&temperature) {
            return error(
                400,
                format!("temperature must be between 0 and 2, got {temperature}"),
            );
        }
        let Some(ticket) = request.messages.iter().rev().find(|m| m.role == "user") else {
            return error(400, "the request has no user message".to_string());
        };
        let mut rng = rand::rng();
        let label = self
            .classifier
            .sample(&ticket.content, temperature, &mut rng);
        // OpenAI's accounting for chat models: each message costs 3 tokens on top of its role
        // and content, and the reply is primed with 3 more.
        let prompt_tokens: u64 = request
            .messages
            .iter()
            .map(|m| 3 + self.tokens(&m.role) + self.tokens(&m.content))
            .sum::<u64>()
            + 3;
        let completion_tokens = self.tokens(label);
        let id = self.responses.fetch_add(1, Ordering::Relaxed);
        let created = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let body = json!({
            "id": format!("chatcmpl-local-{id}"),
            "object": "chat.completion",
            "created": created,
            "model": MODEL,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": label},
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        })
        .to_string();
        if ticket.content.contains(GLITCH_MARKER) && rng.random_bool(GLITCH_RATE) {
            let mut cut = body.len() / 2;
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            return (200, body[..cut].to_string());
        }
        (200, body)
    }
}
