//! The loop's own time per step: a scripted model that answers at once, and the same tool
//! calls made straight on the toolbox beside it, in one run.
//!
//! `cargo bench -p harness-agent --bench step` prints, for runs of 50 and 200 steps (one
//! `read_file` each), the median wall time per step of the whole loop, the median time of
//! the same call on the toolbox alone, and the difference: what the loop itself adds
//! (asking the model on its thread, events, the transcript, context fitting, repeat
//! detection). Target: under 1 ms per step.

#![allow(clippy::print_stdout, missing_docs)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harness_agent::{
    Agent, Budgets, ChatClient, ChatError, Message, NoCheckpoints, Reply, Transcript,
};
use harness_sandbox::Workspace;
use harness_tools::Toolbox;
use serde_json::json;

const FILES: usize = 10;
const ROUNDS: usize = 7;

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    for n in 0..FILES {
        let text: String = (0..40)
            .map(|line| format!("line {line} of file {n}\n"))
            .collect();
        std::fs::write(dir.path().join(format!("f{n}.txt")), text).expect("write");
    }
    let toolbox = Toolbox::new(Workspace::new(dir.path()).expect("workspace"));
    let call = |step: usize| {
        // Another file or line each step, so that no call repeats the one before.
        json!({"path": format!("f{}.txt", step % FILES), "start_line": 1 + step % 7})
    };

    println!("harness-agent: wall time per step, the loop against the toolbox alone\n");
    println!(
        "{:<12} {:>14} {:>14} {:>16}",
        "steps", "loop / step", "tool / call", "loop adds"
    );
    for steps in [50, 200] {
        let mut loop_times = Vec::new();
        let mut tool_times = Vec::new();
        for _ in 0..ROUNDS {
            let replies: Vec<Reply> = (0..steps)
                .map(|step| Reply::call("read_file", call(step)))
                .chain([Reply::text("Done.")])
                .collect();
            let chat = Arc::new(Scripted(Mutex::new(replies.into())));
            let transcript =
                Transcript::create(dir.path().join("transcript.jsonl")).expect("transcript");
            let budgets = Budgets {
                head_start_chars: 0,
                max_steps: steps as u32 + 5,
                ..Budgets::default()
            };
            let began = Instant::now();
            let report = Agent::new(chat, &toolbox)
                .budgets(budgets)
                .transcript(transcript)
                .run("read them", &mut (), &mut NoCheckpoints);
            let took = began.elapsed();
            assert_eq!(report.steps as usize, steps + 1, "{report:?}");
            loop_times.push(took / (steps as u32 + 1));

            let began = Instant::now();
            for step in 0..steps {
                let result = toolbox.call("read_file", &call(step));
                assert!(!result.is_error(), "{}", result.text());
            }
            tool_times.push(began.elapsed() / steps as u32);
        }
        let step = median(&mut loop_times);
        let tool = median(&mut tool_times);
        println!(
            "{:<12} {:>14} {:>14} {:>16}",
            steps,
            format!("{:.3} ms", ms(step)),
            format!("{:.3} ms", ms(tool)),
            format!("{:.3} ms", ms(step.saturating_sub(tool))),
        );
    }
}

/// A model that answers at once from a script, and keeps nothing of what it is sent (the
/// test double `FakeChat` records every request, which would be measured as the loop's).
struct Scripted(Mutex<VecDeque<Reply>>);

impl ChatClient for Scripted {
    fn chat(
        &self,
        _messages: &[Message],
        _tools: &[serde_json::Value],
        _on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError> {
        let mut replies = self.0.lock().map_err(|_| ChatError::new("poisoned"))?;
        replies
            .pop_front()
            .ok_or_else(|| ChatError::new("the script ended"))
    }

    fn context_window(&self) -> Result<u32, ChatError> {
        Ok(1_000_000)
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
