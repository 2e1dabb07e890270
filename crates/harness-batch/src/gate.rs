//! A task's model, counted and capped: [`Gated`] wraps the run's [`ChatClient`], takes a
//! model slot ([`ModelSlots`]) for each request when the batch caps them, and adds up the
//! time spent waiting for a slot and the time inside requests, so a result can tell the
//! model's time from the run's own.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use harness_agent::{ChatClient, ChatError, Message, Reply};
use serde_json::Value;

use crate::slots::ModelSlots;

/// The time a run's model requests took, added up as they end; shared with the caller,
/// which reads it after the run.
#[derive(Debug, Default)]
pub(crate) struct ModelClock {
    /// Nanoseconds inside requests, from sending to the answer's end (streaming included).
    model: AtomicU64,
    /// Nanoseconds waiting for a slot before a request.
    queue: AtomicU64,
}

impl ModelClock {
    /// Seconds inside model requests.
    pub(crate) fn model_seconds(&self) -> f64 {
        seconds(&self.model)
    }

    /// Seconds waiting for a model slot.
    pub(crate) fn queue_seconds(&self) -> f64 {
        seconds(&self.queue)
    }
}

/// The run's client, each request timed and, with slots, holding one.
pub(crate) struct Gated {
    /// The client asked.
    inner: Arc<dyn ChatClient>,
    /// The batch's slots; none when requests are not capped.
    slots: Option<ModelSlots>,
    /// Where the times go.
    clock: Arc<ModelClock>,
}

impl Gated {
    /// `inner`, each request taking one of `slots` if given, its times added to `clock`.
    pub(crate) fn new(
        inner: Arc<dyn ChatClient>,
        slots: Option<ModelSlots>,
        clock: Arc<ModelClock>,
    ) -> Gated {
        Gated {
            inner,
            slots,
            clock,
        }
    }

    /// Runs `request` holding a slot, counting the wait and the request.
    fn gated<T>(
        &self,
        request: impl FnOnce(&dyn ChatClient) -> Result<T, ChatError>,
    ) -> Result<T, ChatError> {
        let waiting = Instant::now();
        let slot = match &self.slots {
            Some(slots) => Some(slots.acquire().map_err(ChatError::new)?),
            None => None,
        };
        add(&self.clock.queue, waiting.elapsed());
        let asking = Instant::now();
        let answer = request(self.inner.as_ref());
        add(&self.clock.model, asking.elapsed());
        // Held to the answer's last byte: a streaming answer is a request in flight.
        drop(slot);
        answer
    }
}

impl ChatClient for Gated {
    fn chat(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Reply, ChatError> {
        self.gated(|inner| inner.chat(messages, tools, on_text))
    }

    fn chat_resampled(
        &self,
        messages: &[Message],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        resample: u32,
    ) -> Result<Reply, ChatError> {
        self.gated(|inner| inner.chat_resampled(messages, tools, on_text, resample))
    }

    fn context_window(&self) -> Result<u32, ChatError> {
        self.gated(|inner| inner.context_window())
    }
}

fn add(total: &AtomicU64, elapsed: Duration) {
    let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    total.fetch_add(nanos, Ordering::Relaxed);
}

fn seconds(total: &AtomicU64) -> f64 {
    Duration::from_nanos(total.load(Ordering::Relaxed)).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model that takes its duration to answer: a real wait, as a server's.
    struct Slow(Duration);

    impl ChatClient for Slow {
        fn chat(
            &self,
            _: &[Message],
            _: &[Value],
            _: &mut dyn FnMut(&str),
        ) -> Result<Reply, ChatError> {
            std::thread::sleep(self.0);
            Ok(Reply::text("done"))
        }

        fn context_window(&self) -> Result<u32, ChatError> {
            Ok(4096)
        }
    }

    #[test]
    fn requests_count_as_model_time_and_waiting_for_the_slot_as_queue_time() {
        let out = tempfile::tempdir().unwrap();
        let slots = ModelSlots::open(out.path(), 1).unwrap();
        let clock = Arc::new(ModelClock::default());
        let gated = Gated::new(
            Arc::new(Slow(Duration::from_millis(100))),
            Some(slots.clone()),
            clock.clone(),
        );
        let held = slots.acquire().unwrap();
        let releasing = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(held);
        });
        let reply = gated.chat(&[], &[], &mut |_| {}).unwrap();
        releasing.join().unwrap();
        assert_eq!(reply.text, "done");
        assert!(clock.queue_seconds() >= 0.15, "{}", clock.queue_seconds());
        assert!(clock.model_seconds() >= 0.1, "{}", clock.model_seconds());
        assert!(
            clock.model_seconds() < 0.15 + 0.1,
            "the wait is not the model's"
        );
        // Released after the request: another takes the slot at once.
        assert!(slots.try_acquire().unwrap().is_some());
    }

    #[test]
    fn without_slots_nothing_waits() {
        let clock = Arc::new(ModelClock::default());
        let gated = Gated::new(Arc::new(Slow(Duration::ZERO)), None, clock.clone());
        for _ in 0..3 {
            gated.chat(&[], &[], &mut |_| {}).unwrap();
        }
        assert_eq!(gated.context_window().unwrap(), 4096);
        assert!(clock.queue_seconds() < 0.01);
    }
}
