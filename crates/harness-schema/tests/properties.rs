//! Generated calls: `parse_call` never panics, accepts exactly what the published schema
//! accepts, and turns every accepted call into typed arguments.
//!
//! The published schema is compiled here again, by `jsonschema::validator_for`, independently
//! of the crate's own compiled copy: the crate must agree with what a server or a reader of
//! the `tools` JSON would conclude from the schema alone.

use std::sync::LazyLock;

use harness_schema::{catalogue, parse_call};
use jsonschema::Validator;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value};

/// The published schemas, compiled by this test, in catalogue order.
static PUBLISHED: LazyLock<Vec<Validator>> = LazyLock::new(|| {
    catalogue()
        .iter()
        .map(|spec| {
            jsonschema::validator_for(spec.parameters()).expect("published schemas compile")
        })
        .collect()
});

/// Argument names of all tools, so random objects often use real ones.
const NAMES: &[&str] = &[
    "path",
    "start_line",
    "end_line",
    "content",
    "overwrite",
    "old_text",
    "new_text",
    "depth",
    "pattern",
    "glob",
    "argv",
    "timeout_s",
];

/// Any JSON value, leaning towards the numbers, strings and names the schemas care about.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop_oneof![-2_i64..=8, 598_i64..=602, any::<i64>()].prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![
            Just(2.0_f64),
            Just(1.5),
            Just(-0.0),
            Just(1e20),
            Just(4_294_967_296.0),
            any::<f64>()
        ]
        .prop_map(Value::from),
        "[a-z/. -]{0,6}".prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(NAMES).prop_map(str::to_owned),
        1 => "[a-z_]{1,6}",
    ]
}

/// A value for one property, usually of the type its schema asks for, sometimes anything.
fn value_for(schema: &Value) -> BoxedStrategy<Value> {
    let typed = match schema["type"].as_str() {
        Some("string") => "[a-z/.]{0,4}".prop_map(Value::from).boxed(),
        Some("integer") => prop_oneof![
            (-1_i64..=8).prop_map(Value::from),
            (598_i64..=602).prop_map(Value::from),
            Just(Value::from(2.0)),
            Just(Value::from(4_294_967_295_u64)),
            Just(Value::from(4_294_967_296_u64)),
        ]
        .boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        Some("array") => prop::collection::vec("[a-z -]{0,4}".prop_map(Value::from), 0..3)
            .prop_map(Value::Array)
            .boxed(),
        _ => any_json().boxed(),
    };
    prop_oneof![6 => typed, 1 => any_json()].boxed()
}

/// A call of one tool, by name: each of its properties present or not, plus sometimes a
/// stray one.
fn near_valid_call() -> impl Strategy<Value = (&'static str, Value)> {
    prop::sample::select(catalogue().iter().collect::<Vec<_>>()).prop_flat_map(|spec| {
        let properties: Vec<(String, BoxedStrategy<Option<Value>>)> =
            spec.parameters()["properties"]
                .as_object()
                .expect("properties is an object")
                .iter()
                .map(|(name, schema)| {
                    let present = prop::option::weighted(0.8, value_for(schema)).boxed();
                    (name.clone(), present)
                })
                .collect();
        let (names, values): (Vec<String>, Vec<_>) = properties.into_iter().unzip();
        let stray = prop::option::weighted(0.1, (key(), any_json()));
        (Just(spec.name()), Just(names), values, stray).prop_map(|(tool, names, values, stray)| {
            let mut object: Map<String, Value> = names
                .into_iter()
                .zip(values)
                .filter_map(|(name, value)| Some((name, value?)))
                .collect();
            if let Some((name, value)) = stray {
                object.insert(name, value);
            }
            (tool, Value::Object(object))
        })
    })
}

fn published(tool: &str) -> &'static Validator {
    let index = catalogue()
        .iter()
        .position(|spec| spec.name() == tool)
        .expect("the spec is in the catalogue");
    &PUBLISHED[index]
}

/// The checks every call must pass, whatever it is.
fn check_call(tool: &str, arguments: &Value) -> Result<(), TestCaseError> {
    let result = parse_call(tool, arguments);
    let object = match arguments {
        Value::String(text) => serde_json::from_str::<Value>(text).ok(),
        other => Some(other.clone()),
    }
    .filter(Value::is_object);
    match (&result, object) {
        (Ok(args), Some(object)) => {
            prop_assert_eq!(args.name(), tool);
            prop_assert!(
                published(tool).is_valid(&object),
                "accepted {} against the schema",
                object
            );
            let back = serde_json::to_value(args).expect("typed arguments serialize");
            prop_assert!(
                published(tool).is_valid(&back),
                "{} does not round-trip: {}",
                object,
                back
            );
        }
        (Ok(args), None) => prop_assert!(false, "accepted a non-object {}: {:?}", arguments, args),
        (Err(error), object) => {
            // Every accepted value deserializes: a refusal means the schema refuses too.
            if let Some(object) = object {
                prop_assert!(
                    !published(tool).is_valid(&object),
                    "schema accepts {} but: {}",
                    object,
                    error
                );
            }
            let message = error.to_string();
            let prefix = format!("{tool}: ");
            prop_assert!(!message.is_empty());
            for line in message.lines() {
                prop_assert!(
                    line.starts_with(&prefix),
                    "line without the tool name: {}",
                    line
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn random_json_never_panics_and_agrees_with_the_schema(
        index in 0..6_usize,
        arguments in any_json(),
    ) {
        check_call(catalogue()[index].name(), &arguments)?;
    }

    #[test]
    fn near_valid_calls_are_accepted_exactly_when_the_schema_accepts_them(
        (tool, object) in near_valid_call(),
    ) {
        check_call(tool, &object)?;
        // The same call as a string, as OpenAI-compatible servers send it, gets the same answer.
        let as_string = Value::String(object.to_string());
        prop_assert_eq!(parse_call(tool, &as_string), parse_call(tool, &object));
    }

    #[test]
    fn random_strings_as_arguments_never_panic(index in 0..6_usize, text in any::<String>()) {
        check_call(catalogue()[index].name(), &Value::String(text))?;
    }

    #[test]
    fn unknown_tool_names_are_refused_with_the_list(name in "[a-z_]{0,12}") {
        prop_assume!(catalogue().iter().all(|spec| spec.name() != name));
        let message = parse_call(&name, &Value::Object(Map::new()))
            .expect_err("not a tool name")
            .to_string();
        prop_assert!(message.starts_with("unknown tool "), "{}", message);
        prop_assert!(message.ends_with("read_file, write_file, edit_file, list_dir, search_text, run_command"));
    }
}

/// The generator must produce accepted calls for every tool, or the property above would
/// only ever exercise refusals.
#[test]
fn near_valid_calls_include_accepted_ones_for_every_tool() {
    let mut runner = TestRunner::deterministic();
    let strategy = near_valid_call();
    let mut accepted = std::collections::BTreeMap::<&str, usize>::new();
    for _ in 0..600 {
        let (tool, object) = strategy
            .new_tree(&mut runner)
            .expect("the strategy generates")
            .current();
        if parse_call(tool, &object).is_ok() {
            *accepted.entry(tool).or_default() += 1;
        }
    }
    for spec in catalogue() {
        let count = accepted.get(spec.name()).copied().unwrap_or_default();
        assert!(
            count >= 5,
            "{}: only {count} accepted calls in 600 samples: {accepted:?}",
            spec.name()
        );
    }
}
