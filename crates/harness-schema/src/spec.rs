//! What the model is told about a tool: [`ToolSpec`], and the small schema model it is built from.
//!
//! Each tool is declared once, as a [`Definition`] table in `catalogue.rs`. Everything else is
//! derived from that table: the JSON Schema the validator compiles, the `tools` entry a server
//! receives, and the argument names an error message lists. Keeping one declaration is what lets
//! the schema stay the source of truth.

use std::sync::OnceLock;

use jsonschema::{Draft, Validator};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::{ToolArgs, ToolName};

/// One tool as the model sees it: a name, a description that teaches the contract, and the JSON
/// Schema of its arguments.
///
/// Serializing a `ToolSpec` gives the entry that Ollama's `/api/chat` and OpenAI-compatible
/// `/v1/chat/completions` accept in their `tools` array:
///
/// ```json
/// {"type": "function", "function": {"name": "…", "description": "…", "parameters": {…}}}
/// ```
///
/// Serialize the spec itself (not [`ToolSpec::parameters`]) when building a request: the spec
/// writes the properties in their declared order (`path` before `start_line`, `old_text` before
/// `new_text`), which is the order a model tends to fill them in, while a [`serde_json::Value`]
/// keeps its keys sorted.
#[derive(Debug)]
pub struct ToolSpec {
    /// The declaration everything else is derived from.
    definition: &'static Definition,
    /// `definition`'s arguments as a JSON Schema value, for the validator and for callers.
    parameters: Value,
    /// Compiled on first use, once per process.
    validator: OnceLock<Validator>,
}

impl ToolSpec {
    /// The tool's name, e.g. `read_file`.
    pub fn name(&self) -> &'static str {
        self.definition.tool.as_str()
    }

    /// The tool, as a [`ToolName`].
    pub fn tool(&self) -> ToolName {
        self.definition.tool
    }

    /// The description the model reads: what the tool does and how to call it well.
    pub fn description(&self) -> &'static str {
        self.definition.description
    }

    /// The JSON Schema of the tool's arguments: an object with `properties` (each with a
    /// `description`), `required` and `additionalProperties: false`.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    pub(crate) fn new(definition: &'static Definition) -> Self {
        let parameters = serde_json::to_value(Parameters(definition.arguments))
            .expect("a schema made of strings, integers and booleans always converts to JSON");
        Self {
            definition,
            parameters,
            validator: OnceLock::new(),
        }
    }

    pub(crate) fn definition(&self) -> &'static Definition {
        self.definition
    }

    /// The compiled validator of [`ToolSpec::parameters`].
    pub(crate) fn validator(&self) -> &Validator {
        self.validator.get_or_init(|| compile(&self.parameters))
    }
}

impl Serialize for ToolSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            r#type: &'static str,
            function: Function<'a>,
        }
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            description: &'a str,
            parameters: Parameters<'a>,
        }
        Wire {
            r#type: "function",
            function: Function {
                name: self.name(),
                description: self.description(),
                parameters: Parameters(self.definition.arguments),
            },
        }
        .serialize(serializer)
    }
}

/// Compiles a JSON Schema written in this crate (or, in tests, next to it).
///
/// Draft 2020-12 is named rather than detected: our schemas carry no `$schema`, and the meaning
/// of `examples` and `items` must not depend on a validator's default.
pub(crate) fn compile(schema: &Value) -> Validator {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(schema)
        .expect("the schemas are declared in this crate and every one compiles (tested)")
}

/// One tool, declared once.
#[derive(Debug)]
pub(crate) struct Definition {
    /// The tool.
    pub(crate) tool: ToolName,
    /// The description the model reads.
    pub(crate) description: &'static str,
    /// The arguments, in the order the model should see them.
    pub(crate) arguments: &'static [Argument],
    /// A small valid call, as JSON text, shown when the arguments are not an object at all.
    pub(crate) example: &'static str,
    /// Deserializes arguments that passed the schema into the tool's typed struct.
    pub(crate) parse: fn(&Value) -> Result<ToolArgs, serde_json::Error>,
}

impl Definition {
    /// The argument names, in declared order.
    pub(crate) fn argument_names(&self) -> Vec<&'static str> {
        self.arguments
            .iter()
            .map(|argument| argument.name)
            .collect()
    }
}

/// One property of a tool's arguments.
#[derive(Debug)]
pub(crate) struct Argument {
    /// The property name.
    pub(crate) name: &'static str,
    /// What the model reads about this argument. A server may drop the schema keywords it does
    /// not know (Ollama keeps little more than `type`, `description` and `enum`), so ranges and
    /// examples belong here in prose too.
    pub(crate) description: &'static str,
    /// Whether the call is invalid without it.
    pub(crate) required: bool,
    /// The JSON type and its constraints.
    pub(crate) kind: Kind,
}

/// The shapes our arguments take. Few on purpose: every tool argument is one of these.
#[derive(Debug)]
pub(crate) enum Kind {
    /// Any string, the empty one included (file content, replacement text).
    String,
    /// A string of at least one character (paths, patterns, the text to replace).
    NonEmptyString,
    /// `true` or `false`.
    Boolean,
    /// An integer in `minimum..=maximum`.
    Integer { minimum: u64, maximum: u64 },
    /// An array of at least one string; `example` is a valid value, shown to the model.
    NonEmptyStringArray { example: &'static [&'static str] },
}

/// Serializes a tool's arguments as a JSON Schema object, properties in declared order.
struct Parameters<'a>(&'a [Argument]);

impl Serialize for Parameters<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let required: Vec<&str> = self
            .0
            .iter()
            .filter(|argument| argument.required)
            .map(|argument| argument.name)
            .collect();
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("type", "object")?;
        map.serialize_entry("properties", &Properties(self.0))?;
        map.serialize_entry("required", &required)?;
        map.serialize_entry("additionalProperties", &false)?;
        map.end()
    }
}

/// Serializes the `properties` object: name to property schema, in declared order.
struct Properties<'a>(&'a [Argument]);

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for argument in self.0 {
            map.serialize_entry(argument.name, argument)?;
        }
        map.end()
    }
}

impl Serialize for Argument {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match &self.kind {
            Kind::String => {
                map.serialize_entry("type", "string")?;
                map.serialize_entry("description", self.description)?;
            }
            Kind::NonEmptyString => {
                map.serialize_entry("type", "string")?;
                map.serialize_entry("description", self.description)?;
                map.serialize_entry("minLength", &1)?;
            }
            Kind::Boolean => {
                map.serialize_entry("type", "boolean")?;
                map.serialize_entry("description", self.description)?;
            }
            Kind::Integer { minimum, maximum } => {
                map.serialize_entry("type", "integer")?;
                map.serialize_entry("description", self.description)?;
                map.serialize_entry("minimum", minimum)?;
                map.serialize_entry("maximum", maximum)?;
            }
            Kind::NonEmptyStringArray { example } => {
                map.serialize_entry("type", "array")?;
                map.serialize_entry("description", self.description)?;
                map.serialize_entry("items", &serde_json::json!({ "type": "string" }))?;
                map.serialize_entry("minItems", &1)?;
                // `examples` is the standard annotation for sample values; error messages
                // quote its first entry so the model sees the shape it got wrong.
                map.serialize_entry("examples", &[example])?;
            }
        }
        map.end()
    }
}
