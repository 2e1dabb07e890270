//! Budgets and stopping: steps, tokens, time (also while the model answers or a command
//! runs), a stop request, a model that fails or cannot be reached, and the context window.

use super::*;

#[test]
fn the_step_budget_ends_the_run() {
    let (_dir, toolbox) = workspace(&[("a.txt", "x\n")]);
    let replies: Vec<Reply> = (1..=5)
        .map(|line| Reply::call("read_file", json!({"path": "a.txt", "start_line": line})))
        .collect();
    let budgets = Budgets {
        max_steps: 2,
        ..no_head_start()
    };
    let ran = run_with(&toolbox, FakeChat::new(replies), budgets, None);
    assert_eq!(ran.report.outcome, Outcome::StepLimit);
    assert_eq!(ran.report.steps, 2);
    assert_eq!(ran.chat.requests().len(), 2);
}

#[test]
fn the_token_budget_ends_the_run() {
    let (_dir, toolbox) = workspace(&[("a.txt", "x\n")]);
    let replies = vec![
        Reply::call("read_file", json!({"path": "a.txt"})).with_tokens(60, 39),
        Reply::call("read_file", json!({"path": "a.txt", "start_line": 1})).with_tokens(60, 1),
        Reply::text("never asked"),
    ];
    let budgets = Budgets {
        max_tokens: Some(100),
        ..no_head_start()
    };
    let ran = run_with(&toolbox, FakeChat::new(replies), budgets, None);
    assert_eq!(ran.report.outcome, Outcome::TokenLimit);
    assert_eq!(
        ran.report.steps, 2,
        "99 tokens leave room for a second step, 160 do not"
    );
    assert_eq!(
        (ran.report.prompt_tokens, ran.report.completion_tokens),
        (120, 40)
    );
}

/// A model that takes `delay` to answer anything.
struct Slow {
    delay: Duration,
}

impl ChatClient for Slow {
    fn chat(
        &self,
        _messages: &[Message],
        _tools: &[Value],
        _on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError> {
        std::thread::sleep(self.delay);
        Ok(Reply::text("too late"))
    }

    fn context_window(&self) -> Result<u32, ChatError> {
        Ok(8192)
    }
}

#[test]
fn the_time_budget_ends_the_run_even_while_the_model_is_answering() {
    let (_dir, toolbox) = workspace(&[]);
    let budgets = Budgets {
        max_duration: Duration::from_millis(300),
        ..no_head_start()
    };
    let began = Instant::now();
    let slow = Arc::new(Slow {
        delay: Duration::from_secs(60),
    });
    let report =
        Agent::new(slow, &toolbox)
            .budgets(budgets)
            .run("t", &mut (), &mut Labels::default());
    assert_eq!(report.outcome, Outcome::TimeLimit);
    assert_eq!(report.steps, 1);
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "did not wait for the model"
    );
}

#[test]
fn the_time_budget_ends_the_run_even_while_a_command_or_the_check_runs() {
    let (_dir, toolbox) = workspace(&[]);
    // The model's command and the verification each ask for far longer than the run has.
    let by_the_model = vec![
        Reply::call(
            "run_command",
            json!({"argv": ["sleep", "60"], "timeout_s": 600}),
        ),
        Reply::text("never asked"),
    ];
    let by_the_check = vec![Reply::text("Done.")];
    for (replies, verification) in [(by_the_model, None), (by_the_check, Some("sleep 60"))] {
        let budgets = Budgets {
            max_duration: Duration::from_millis(1_500),
            ..no_head_start()
        };
        let began = Instant::now();
        let ran = run_with(&toolbox, FakeChat::new(replies), budgets, verification);
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "the run waited for its command ({verification:?})"
        );
        assert_eq!(ran.report.outcome, Outcome::TimeLimit, "{verification:?}");
        assert_eq!(ran.chat.requests().len(), 1, "{verification:?}");
    }
}

/// Raises the stop signal on the first event named `on`.
struct StopOn {
    on: &'static str,
    stop: StopSignal,
    seen: Vec<Value>,
}

impl Observer for StopOn {
    fn on_event(&mut self, event: &Event<'_>) {
        let value = serde_json::to_value(event).expect("events serialize");
        if value["event"] == self.on && !self.stop.is_requested() {
            self.stop.request();
        }
        self.seen.push(value);
    }
}

#[test]
fn a_stop_during_a_tool_lets_it_finish_then_checkpoints_and_ends() {
    let (dir, toolbox) = workspace(&[]);
    let stop = StopSignal::new();
    let mut observer = StopOn {
        on: "tool_started",
        stop: stop.clone(),
        seen: Vec::new(),
    };
    let chat = Arc::new(FakeChat::new([
        Reply::calls([
            ("write_file", json!({"path": "a.txt", "content": "a\n"})),
            ("write_file", json!({"path": "b.txt", "content": "b\n"})),
        ]),
        Reply::text("never asked"),
    ]));
    let mut checkpoints = Labels::default();
    let report = Agent::new(chat.clone(), &toolbox)
        .budgets(no_head_start())
        .stop_signal(stop)
        .run("t", &mut observer, &mut checkpoints);
    assert_eq!(report.outcome, Outcome::Interrupted);
    assert!(
        dir.path().join("a.txt").exists(),
        "the current tool finished"
    );
    assert!(
        !dir.path().join("b.txt").exists(),
        "the next one did not start"
    );
    assert_eq!(checkpoints.0, ["step 1: write_file a.txt"]);
    assert_eq!(chat.requests().len(), 1);
    assert_eq!(observer.seen.last().unwrap()["event"], "finished");
}

#[test]
fn a_stop_while_the_model_answers_ends_the_run_at_once() {
    let (_dir, toolbox) = workspace(&[]);
    let stop = StopSignal::new();
    let mut observer = StopOn {
        on: "waiting",
        stop: stop.clone(),
        seen: Vec::new(),
    };
    let began = Instant::now();
    let slow = Arc::new(Slow {
        delay: Duration::from_secs(60),
    });
    let report = Agent::new(slow, &toolbox)
        .budgets(no_head_start())
        .stop_signal(stop)
        .run("t", &mut observer, &mut Labels::default());
    assert_eq!(report.outcome, Outcome::Interrupted);
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "did not wait for the model"
    );
}

#[test]
fn a_model_error_ends_the_run_with_its_message() {
    let (_dir, toolbox) = workspace(&[]);
    let chat = FakeChat::new([Reply::call("list_dir", json!({}))]).then_fail("no Ollama server");
    let ran = run_with(&toolbox, chat, no_head_start(), None);
    assert_eq!(ran.report.outcome, Outcome::ModelError);
    assert_eq!(ran.report.reason, "no Ollama server");
    assert_eq!(ran.report.steps, 2);
}

#[test]
fn a_reply_cut_off_is_continued_not_taken_for_done() {
    let (_dir, toolbox) = workspace(&[]);
    let mut cut = Reply::text("I will now");
    cut.cut_off = true;
    let ran = run(&toolbox, vec![cut, Reply::text("Done.")], None);
    assert_eq!(ran.report.steps, 2);
    let last = ran.request(1).last().unwrap().clone();
    assert!(last.content.contains("cut off"), "{}", last.content);
    assert_eq!(ran.report.final_text, "Done.");
}

#[test]
fn older_results_are_elided_to_fit_the_window_and_the_head_and_last_turns_stay() {
    let block = |tag: &str| -> String {
        (0..60)
            .map(|n| format!("{tag} {n} {}\n", "=".repeat(50)))
            .collect()
    };
    let files: Vec<(String, String)> = (0..6)
        .map(|n| (format!("f{n}.txt"), block(&format!("file{n}"))))
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let (_dir, toolbox) = workspace(&borrowed);
    let mut replies: Vec<Reply> = (0..6)
        .map(|n| Reply::call("read_file", json!({"path": format!("f{n}.txt")})))
        .collect();
    replies.push(Reply::text("Read them."));
    // Each result is about 3,500 characters, about 1,200 tokens: a 6,000-token window with
    // 1,024 kept for the answer holds the tools, the prompt and about three results.
    let chat = FakeChat::new(replies).with_context_window(6_000);
    let ran = run_with(&toolbox, chat, no_head_start(), None);
    assert_eq!(ran.report.outcome, Outcome::Unverified);

    let last = ran.request(6);
    assert_eq!(last[0], ran.request(0)[0], "the system prompt is intact");
    assert_eq!(last[1], ran.request(0)[1], "the task is intact");
    assert!(last[1].content.starts_with("fix the bug\n\n"));
    let results: Vec<&Message> = last.iter().filter(|m| m.role == Role::Tool).collect();
    assert_eq!(results.len(), 6);
    assert!(
        results[0]
            .content
            .starts_with("[elided to fit the context window:"),
        "{}",
        results[0].content
    );
    assert!(results[0].content.contains("file0 0 "), "the head is kept");
    assert!(results[0].content.contains("file0 59 "), "the tail is kept");
    assert!(
        !results[0].content.contains("file0 30 "),
        "the middle is gone"
    );
    for kept in &results[4..] {
        assert!(
            !kept.content.starts_with("[elided"),
            "the last two turns are whole"
        );
    }
    assert!(results[5].content.contains("file5 30 "));
    let trimmed = ran.events_named("context_trimmed");
    assert!(!trimmed.is_empty());
}

#[test]
fn an_unreachable_model_ends_the_run_before_anything_runs() {
    struct Down;
    impl ChatClient for Down {
        fn chat(
            &self,
            _: &[Message],
            _: &[Value],
            _: &mut dyn FnMut(&str),
        ) -> Result<Reply, ChatError> {
            Err(ChatError::new("unreachable"))
        }
        fn context_window(&self) -> Result<u32, ChatError> {
            Err(ChatError::new("no Ollama server at http://127.0.0.1:9"))
        }
    }
    let (dir, toolbox) = workspace(&[]);
    let report = Agent::new(Arc::new(Down), &toolbox)
        .verification(Verification::parse("touch ran").unwrap())
        .run("t", &mut (), &mut Labels::default());
    assert_eq!(report.outcome, Outcome::ModelError);
    assert_eq!(report.reason, "no Ollama server at http://127.0.0.1:9");
    assert_eq!(report.steps, 0);
    assert!(
        !Path::new(&dir.path().join("ran")).exists(),
        "no head start ran"
    );
}
