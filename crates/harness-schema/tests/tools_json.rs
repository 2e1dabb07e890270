//! The exact `tools` array a chat server receives, pinned by a snapshot file next to this test.
//!
//! Set `HARNESS_BLESS=1` to overwrite `snapshots/tools.json` with the current output after a
//! deliberate change, then review the diff of the snapshot like any other change: the model
//! reads every word of it.

use std::path::Path;

use harness_schema::catalogue;
use serde_json::Value;

#[test]
fn the_catalogue_serializes_to_the_snapshot() {
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tools.json");
    let actual = serde_json::to_string_pretty(catalogue()).expect("specs serialize") + "\n";
    if std::env::var_os("HARNESS_BLESS").is_some() {
        std::fs::write(&snapshot, &actual).expect("snapshot is writable");
    }
    let expected = std::fs::read_to_string(&snapshot).unwrap_or_else(|error| {
        panic!("{}: {error}; run with HARNESS_BLESS=1", snapshot.display())
    });
    assert!(
        actual == expected,
        "the tools JSON changed; if that is intended, rerun with HARNESS_BLESS=1 and review \
         the snapshot diff.\n--- actual\n{actual}"
    );
}

#[test]
fn every_entry_has_the_shape_servers_accept() {
    let tools = serde_json::to_value(catalogue()).expect("specs serialize");
    let tools = tools
        .as_array()
        .expect("the catalogue serializes to an array");
    assert_eq!(tools.len(), 6);
    for tool in tools {
        let entry = tool.as_object().expect("each entry is an object");
        assert_eq!(entry.len(), 2, "{tool}");
        assert_eq!(entry["type"], "function");
        let function = entry["function"]
            .as_object()
            .expect("function is an object");
        assert_eq!(function.len(), 3, "{tool}");
        let name = function["name"].as_str().expect("a name");
        assert!(
            !function["description"]
                .as_str()
                .expect("a description")
                .is_empty()
        );

        let parameters = function["parameters"]
            .as_object()
            .expect("parameters is an object");
        assert_eq!(parameters["type"], "object", "{name}");
        assert_eq!(parameters["additionalProperties"], false, "{name}");
        let properties = parameters["properties"].as_object().expect("properties");
        assert!(!properties.is_empty(), "{name}");
        for (property, schema) in properties {
            let description = schema["description"].as_str().unwrap_or_default();
            assert!(
                !description.is_empty(),
                "{name}.{property} has no description"
            );
            assert!(schema["type"].is_string(), "{name}.{property} has no type");
        }
        for required in parameters["required"]
            .as_array()
            .expect("required is an array")
        {
            let required = required.as_str().expect("required names are strings");
            assert!(
                properties.contains_key(required),
                "{name} requires unknown {required}"
            );
        }
    }
}

#[test]
fn the_spec_accessors_agree_with_the_serialized_form() {
    let tools = serde_json::to_value(catalogue()).expect("specs serialize");
    for (spec, tool) in catalogue().iter().zip(tools.as_array().expect("an array")) {
        assert_eq!(tool["function"]["name"], spec.name());
        assert_eq!(tool["function"]["description"], spec.description());
        assert_eq!(&tool["function"]["parameters"], spec.parameters());
    }
}

#[test]
fn properties_keep_their_declared_order_in_the_serialized_form() {
    // A `Value` sorts its keys; the serialized spec must not, so `old_text` comes before
    // `new_text` in what the model reads.
    let text = serde_json::to_string(catalogue()).expect("specs serialize");
    let position = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing"))
    };
    assert!(position("\"old_text\":{") < position("\"new_text\":{"));
    assert!(
        position("\"path\":{\"type\":\"string\",\"description\":\"Path of the file,")
            < position("\"start_line\":{")
    );
    assert!(position("\"pattern\":{") < position("\"glob\":{"));
    let spec_value: Value = serde_json::from_str(&text).expect("round trip");
    assert_eq!(
        spec_value,
        serde_json::to_value(catalogue()).expect("specs serialize")
    );
}
