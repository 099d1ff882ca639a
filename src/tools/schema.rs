//! Schema-driven repair (`cast`) and checking (`validate`) of a model's tool arguments, for our own tools and for the
//! schemas MCP servers send. `cast` fixes the harmless mistakes models make ("60" for 60, "true" for true, a JSON
//! array sent as a string) and never fails; `validate` then says, path by path, what is still wrong, in short
//! messages the model reads. Neither may panic, loop or blow up on hostile schemas or values: recursion is capped by
//! depth, total work by a budget, and every echoed value or key is truncated.
//!
//! Supported keywords: `type` (name or list), `nullable`, `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum` (numeric, or draft-4 booleans), `multipleOf`, `minLength`, `maxLength`, `pattern`, `minItems`,
//! `maxItems`, `uniqueItems`, `items` (schema or draft-4 tuple), `prefixItems`, `additionalItems`, `properties`,
//! `required`, `additionalProperties`, `patternProperties`, `minProperties`, `maxProperties`, `allOf`, `anyOf`,
//! `oneOf` (treated like `anyOf`: for tool arguments "matches a branch" is what matters), `not`, boolean schemas, and
//! local `$ref`s (`#`, `#/$defs/X`, `#/definitions/X`, any JSON pointer into the root schema). Everything else
//! (`format`, `title`, `default`, remote `$ref`s, ...) is ignored, never an error.

use std::cmp::Ordering;
use std::collections::HashMap;

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use serde_json::{Map, Number, Value};

mod cast;
#[cfg(test)]
mod prop_tests;
mod validate;

/// Deepest nesting of schema and data followed; guards recursive `$ref`s and absurdly nested values.
const MAX_DEPTH: usize = 128;
/// Schema nodes visited per call; guards the exponential blow-up of nested `anyOf`s over recursive `$ref`s.
const BUDGET: usize = 100_000;
/// Errors reported per call; the rest are counted.
const MAX_ERRORS: usize = 20;
const MAX_KEY_CHARS: usize = 40;
const MAX_LABEL_CHARS: usize = 160;
const MAX_VALUE_CHARS: usize = 60;
const MAX_LIST_CHARS: usize = 240;
/// Longer `pattern`s are not checked: compiling them is not worth it for argument checking.
const MAX_PATTERN_CHARS: usize = 1000;
const TOO_COMPLEX: &str = "parameters are too complex to validate against this schema";

/// Converts `value` towards what `schema` asks for where the intent is unambiguous; anything it cannot convert is
/// left as it is for `validate` to report. Numbers and booleans become strings where a string is wanted, but objects
/// and arrays do not (serialising them would hide the model's mistake behind a confusing downstream error); `null`
/// for an optional property that does not accept null is dropped, as if omitted. Values already valid are unchanged.
pub(crate) fn cast(schema: &Value, value: Value) -> Value {
    let mut cx = Ctx::new(schema);
    cast::cast_node(&mut cx, schema, value, 0)
}

/// Everything wrong with `value` under `schema`, each message labelled with its path (`edits[0].path`); empty when
/// valid. At most `MAX_ERRORS` messages, then a count of the rest.
pub(crate) fn validate(schema: &Value, value: &Value) -> Vec<String> {
    let mut cx = Ctx::new(schema);
    let mut errors = Errors::default();
    validate::check(&mut cx, schema, value, &mut String::new(), &mut errors, 0);
    errors.into_messages()
}

/// State shared by one `cast` or `validate` call: the root schema `$ref`s resolve against, the remaining work
/// budget, and compiled patterns.
struct Ctx<'s> {
    root: &'s Value,
    budget: usize,
    regexes: HashMap<&'s str, Option<RegexMatcher>>,
}

impl<'s> Ctx<'s> {
    fn new(root: &'s Value) -> Self {
        Self {
            root,
            budget: BUDGET,
            regexes: HashMap::new(),
        }
    }

    /// Takes one unit of work; false once the budget is spent.
    fn spend(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    /// The schema a local `$ref` in `obj` points to; remote or broken references resolve to nothing.
    fn target(&self, obj: &Map<String, Value>) -> Option<&'s Value> {
        let pointer = obj.get("$ref")?.as_str()?.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    /// Whether `text` matches `pattern` (unanchored, as JSON Schema says); None when the pattern is too long or not
    /// a regex we understand (ECMA-only syntax such as look-around), in which case the caller must not complain.
    fn regex_match(&mut self, pattern: &'s str, text: &str) -> Option<bool> {
        let matcher = self.regexes.entry(pattern).or_insert_with(|| {
            if pattern.chars().count() > MAX_PATTERN_CHARS {
                return None;
            }
            RegexMatcherBuilder::new()
                .size_limit(1 << 20)
                .dfa_size_limit(1 << 21)
                .build(pattern)
                .ok()
        });
        matcher.as_ref()?.is_match(text.as_bytes()).ok()
    }
}

/// Collected messages, deduplicated and capped.
#[derive(Default)]
struct Errors {
    shown: Vec<String>,
    hidden: usize,
}

impl Errors {
    fn push(&mut self, message: String) {
        if self.shown.contains(&message) {
            return;
        }
        if self.shown.len() < MAX_ERRORS {
            self.shown.push(message);
        } else {
            self.hidden += 1;
        }
    }

    fn count(&self) -> usize {
        self.shown.len() + self.hidden
    }

    fn is_empty(&self) -> bool {
        self.count() == 0
    }

    fn absorb(&mut self, other: Errors) {
        for message in other.shown {
            self.push(message);
        }
        self.hidden += other.hidden;
    }

    fn into_messages(self) -> Vec<String> {
        let mut messages = self.shown;
        if self.hidden > 0 {
            messages.push(format!(
                "...and {} more {}",
                self.hidden,
                plural(self.hidden as u64, "error", "errors")
            ));
        }
        messages
    }
}

/// Appends `.key` (or `key` at the root) to `path`; returns the length to truncate back to.
fn push_key(path: &mut String, key: &str) -> usize {
    let mark = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    // Keys come from the model: keep control characters from breaking the message apart.
    for c in truncate(key, MAX_KEY_CHARS).chars() {
        if c.is_control() {
            path.extend(c.escape_debug());
        } else {
            path.push(c);
        }
    }
    mark
}

/// Appends `[index]` to `path`; returns the length to truncate back to.
fn push_index(path: &mut String, index: usize) -> usize {
    let mark = path.len();
    path.push_str(&format!("[{index}]"));
    mark
}

/// How a path is named in a message: the root is "parameters"; very deep paths keep their end.
fn label(path: &str) -> String {
    if path.is_empty() {
        return "parameters".to_string();
    }
    let chars = path.chars().count();
    if chars <= MAX_LABEL_CHARS {
        return path.to_string();
    }
    let tail: String = path.chars().skip(chars - MAX_LABEL_CHARS).collect();
    format!("…{tail}")
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A value as JSON, short enough to echo in a message.
fn render(value: &Value) -> String {
    truncate(&value.to_string(), MAX_VALUE_CHARS)
}

/// `[a, b, ...]` with each value rendered short and the list cut off once it gets long.
fn render_list(values: &[Value]) -> String {
    let mut out = String::from("[");
    for (i, value) in values.iter().enumerate() {
        if out.chars().count() > MAX_LIST_CHARS {
            out.push_str(&format!("... ({} more)", values.len() - i));
            break;
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&render(value));
    }
    out.push(']');
    out
}

fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// Type names the schema's `type` keyword declares (a name or a list of names).
fn declared_types(obj: &Map<String, Value>) -> Vec<&str> {
    match obj.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Declared types, or the type implied by structural keywords when none is declared. Used to decide what to cast
/// to and which `anyOf` branch a value was aiming at, never to reject a value.
fn effective_types(obj: &Map<String, Value>) -> Vec<&str> {
    let declared = declared_types(obj);
    if !declared.is_empty() {
        return declared;
    }
    let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
    if has(&["properties", "required", "additionalProperties", "patternProperties"]) {
        vec!["object"]
    } else if has(&["items", "prefixItems"]) {
        vec!["array"]
    } else {
        Vec::new()
    }
}

/// Whether `value` is of JSON Schema type `name`. Unknown names do not constrain.
fn is_type(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// OpenAPI's `nullable: true`, which MCP servers generated from OpenAPI still send.
fn nullable(obj: &Map<String, Value>) -> bool {
    obj.get("nullable") == Some(&Value::Bool(true))
}

/// The schema for array element `index`: `prefixItems`/tuple `items` by position, then `items`/`additionalItems`.
fn item_schema(obj: &Map<String, Value>, index: usize) -> Option<&Value> {
    let schema_only = |key: &str| obj.get(key).filter(|s| !s.is_array());
    if let Some(prefix) = obj.get("prefixItems").and_then(Value::as_array) {
        return prefix.get(index).or_else(|| schema_only("items"));
    }
    match obj.get("items") {
        Some(Value::Array(tuple)) => tuple.get(index).or_else(|| schema_only("additionalItems")),
        other => other,
    }
}

/// JSON equality with numbers compared by value, so 1 and 1.0 are equal.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => x.as_f64() == y.as_f64(),
        (Value::Array(xs), Value::Array(ys)) => xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_eq(x, y)),
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len() && xs.iter().all(|(k, x)| ys.get(k).is_some_and(|y| json_eq(x, y)))
        }
        _ => a == b,
    }
}

/// Numeric order, exact for integers, by value for floats.
fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return Some(x.cmp(&y));
    }
    a.as_f64()?.partial_cmp(&b.as_f64()?)
}

#[cfg(test)]
mod tests {
    //! Property tests over `cast` and `validate` together; keyword-by-keyword unit tests live beside each half.

    use proptest::prelude::*;
    use proptest::sample::select;
    use proptest::strategy::Union;
    use serde_json::{Map, Number, Value, json};

    use super::{MAX_ERRORS, cast, validate};

    fn tricky_text() -> impl Strategy<Value = String> {
        let pool = [
            "60",
            " 7 ",
            "2.5",
            "-0",
            "1e400",
            "NaN",
            "true",
            "No",
            "1",
            "[1, \"2\"]",
            "{\"path\": 3}",
            "[",
            "{",
            "18446744073709551616",
            "null",
            "",
            "Content",
        ];
        prop_oneof![select(pool.to_vec()).prop_map(String::from), "\\PC{0,12}"]
    }

    fn key() -> impl Strategy<Value = String> {
        let known = [
            "path", "offset", "limit", "mode", "edits", "n", "a", "b", "size", "children", "x_1",
        ];
        prop_oneof![select(known.to_vec()).prop_map(String::from), "[a-z_]{1,8}"]
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
            tricky_text().prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Schemas shaped like real tool and MCP schemas: every value generated by `conforming` for them is valid.
    fn tame_schemas() -> Vec<Value> {
        vec![
            json!({"type": "object", "properties": {
                "path": {"type": "string", "minLength": 1, "description": "File to read"},
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            }, "required": ["path"], "additionalProperties": false}),
            json!({"type": "object", "properties": {
                "pattern": {"type": "string", "maxLength": 20},
                "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
                "case_insensitive": {"type": "boolean"},
                "context": {"type": "integer", "minimum": 0, "maximum": 20},
                "head_limit": {"type": "integer", "nullable": true, "exclusiveMinimum": 0},
                "glob": {"type": ["string", "null"]},
                "step": {"type": "integer", "minimum": 0, "maximum": 100, "multipleOf": 5},
            }, "required": ["pattern"], "additionalProperties": false}),
            json!({"type": "object", "properties": {
                "edits": {"type": "array", "minItems": 1, "maxItems": 4, "items": {"type": "object", "properties": {
                    "path": {"type": "string"},
                    "action": {"type": "string", "enum": ["replace", "add"]},
                    "old_text": {"type": "string"},
                    "new_text": {"type": "string"},
                }, "required": ["path", "new_text"], "additionalProperties": false}},
                "dry_run": {"type": "boolean"},
            }, "required": ["edits"], "additionalProperties": false}),
            json!({"$defs": {"node": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            }, "required": ["size"], "additionalProperties": false}}, "$ref": "#/$defs/node"}),
            json!({"definitions": {"Pos": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e6}},
                "type": "object", "properties": {
                "at": {"anyOf": [{"$ref": "#/definitions/Pos"}, {"type": "null"}]},
                "target": {"oneOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "object", "properties": {"file": {"type": "string"}, "line": {"type": "integer"}},
                        "required": ["file", "line"], "additionalProperties": false},
                ]},
                "flag": {"enum": [1, "1", true, null]},
                "fixed": {"const": {"v": [1, 2]}},
            }, "additionalProperties": false}),
            json!({"type": "object", "properties": {
                "either": {"type": ["integer", "string"]},
                "numberish": {"type": ["number", "boolean"]},
                "list": {"type": ["array", "null"], "items": {"type": "integer", "minimum": -5, "maximum": 5}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
                "opt": {"type": "object", "nullable": true, "properties": {"n": {"type": "integer"}}},
            }, "additionalProperties": false}),
        ]
    }

    /// Tame schemas plus malformed, recursive and explosive ones.
    fn all_schemas() -> Vec<Value> {
        let mut schemas = tame_schemas();
        schemas.extend([
            json!(true),
            json!(false),
            json!(null),
            json!("string"),
            json!({"type": 5, "items": "x", "properties": [], "required": "path", "enum": {}, "minimum": "1"}),
            json!({"$ref": "#"}),
            json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"type": "integer"}]}),
            json!({"allOf": [{"$ref": "#"}], "items": {"$ref": "#"}, "additionalProperties": {"$ref": "#"}}),
            json!({"$ref": "https://example.com/s.json", "patternProperties": {"(": {"type": "integer"}}}),
            json!({"type": "array", "uniqueItems": true, "items": {"type": "string", "pattern": "^[0-9]+$"},
                "maxItems": 2, "multipleOf": 0}),
            json!({"type": "object", "additionalProperties": false, "minProperties": 2, "not": {}}),
        ]);
        schemas
    }

    /// A strategy producing values valid under `schema` (for the keywords the tame schemas use).
    fn conforming(root: &Value, schema: &Value, depth: u32) -> BoxedStrategy<Value> {
        let obj = schema.as_object().unwrap();
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            let target = root.pointer(reference.strip_prefix('#').unwrap()).unwrap();
            return conforming(root, target, depth + 1);
        }
        if let Some(members) = obj.get("enum").and_then(Value::as_array) {
            return select(members.clone()).boxed();
        }
        if let Some(constant) = obj.get("const") {
            return Just(constant.clone()).boxed();
        }
        if let Some(branches) = obj.get("anyOf").or_else(|| obj.get("oneOf")).and_then(Value::as_array) {
            return Union::new(branches.iter().map(|b| conforming(root, b, depth + 1))).boxed();
        }
        let mut options: Vec<BoxedStrategy<Value>> = match &obj["type"] {
            Value::String(name) => vec![of_type(root, obj, name, depth)],
            Value::Array(names) => names
                .iter()
                .map(|n| of_type(root, obj, n.as_str().unwrap(), depth))
                .collect(),
            other => panic!("test schema without a type: {other}"),
        };
        if obj.get("nullable") == Some(&json!(true)) {
            options.push(Just(Value::Null).boxed());
        }
        Union::new(options).boxed()
    }

    fn of_type(root: &Value, obj: &Map<String, Value>, name: &str, depth: u32) -> BoxedStrategy<Value> {
        let int = |key: &str| obj.get(key).and_then(Value::as_i64);
        let float = |key: &str| obj.get(key).and_then(Value::as_f64);
        match name {
            "null" => Just(Value::Null).boxed(),
            "boolean" => any::<bool>().prop_map(Value::from).boxed(),
            "integer" => {
                let lo = int("minimum")
                    .or(int("exclusiveMinimum").map(|m| m + 1))
                    .unwrap_or(i64::MIN);
                let hi = int("maximum")
                    .or(int("exclusiveMaximum").map(|m| m - 1))
                    .unwrap_or(i64::MAX);
                match int("multipleOf") {
                    Some(step) => (lo / step..=hi / step).prop_map(move |k| Value::from(k * step)).boxed(),
                    None => (lo..=hi).prop_map(Value::from).boxed(),
                }
            }
            "number" => {
                let lo = float("minimum").or(float("exclusiveMinimum")).unwrap_or(-1e12);
                let hi = float("maximum").or(float("exclusiveMaximum")).unwrap_or(1e12);
                (lo..=hi)
                    .prop_filter("exclusive bound", move |f| *f != lo)
                    .prop_map(|f| json!(f))
                    .boxed()
            }
            "string" => {
                let min = int("minLength").unwrap_or(0) as usize;
                let max = int("maxLength").unwrap_or(12) as usize;
                tricky_text()
                    .prop_filter("length", move |s| (min..=max).contains(&s.chars().count()))
                    .prop_map(Value::from)
                    .boxed()
            }
            "array" => {
                if let Some(prefix) = obj.get("prefixItems").and_then(Value::as_array) {
                    let parts: Vec<_> = prefix.iter().map(|s| conforming(root, s, depth + 1)).collect();
                    return parts.prop_map(Value::Array).boxed();
                }
                let min = int("minItems").unwrap_or(0) as usize;
                let max = if depth > 4 {
                    min
                } else {
                    int("maxItems").unwrap_or(4) as usize
                };
                let item = conforming(root, &obj["items"], depth + 1);
                prop::collection::vec(item, min..=max).prop_map(Value::Array).boxed()
            }
            "object" => {
                let required: Vec<&str> = obj
                    .get("required")
                    .map(|r| r.as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect())
                    .unwrap_or_default();
                let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
                for (key, schema) in obj.get("properties").and_then(Value::as_object).into_iter().flatten() {
                    let is_required = required.contains(&key.as_str());
                    if !is_required && depth > 4 {
                        continue;
                    }
                    let key = key.clone();
                    let value = conforming(root, schema, depth + 1).prop_map(move |v| Some((key.clone(), v)));
                    fields.push(if is_required {
                        value.boxed()
                    } else {
                        prop_oneof![Just(None), value].boxed()
                    });
                }
                if let Some(extra @ Value::Object(_)) = obj.get("additionalProperties") {
                    let value = conforming(root, extra, depth + 1);
                    for i in 0..2 {
                        let entry = value.clone().prop_map(move |v| Some((format!("extra_{i}"), v)));
                        fields.push(prop_oneof![Just(None), entry].boxed());
                    }
                }
                fields
                    .prop_map(|entries| Value::Object(entries.into_iter().flatten().collect()))
                    .boxed()
            }
            other => panic!("unsupported test type {other}"),
        }
    }

    fn schema_and_conforming_value() -> impl Strategy<Value = (Value, Value)> {
        select(tame_schemas()).prop_flat_map(|schema| {
            let values = conforming(&schema, &schema, 0);
            (Just(schema), values)
        })
    }

    proptest! {
        #![proptest_config(tern_testkit::fuzz_config(256))]
        #[test]
        fn cast_and_validate_never_panic_and_stay_short(schema in select(all_schemas()), value in arb_json()) {
            let cast_value = cast(&schema, value.clone());
            for found in [validate(&schema, &cast_value), validate(&schema, &value)] {
                prop_assert!(found.len() <= MAX_ERRORS + 1);
                for message in found {
                    prop_assert!(message.chars().count() <= 400, "{}", message);
                }
            }
        }

        #[test]
        fn cast_is_idempotent(schema in select(tame_schemas()), value in arb_json()) {
            let once = cast(&schema, value);
            prop_assert_eq!(cast(&schema, once.clone()), once);
        }

        #[test]
        fn conforming_values_survive_cast_unchanged_and_validate((schema, value) in schema_and_conforming_value()) {
            let cast_value = cast(&schema, value.clone());
            prop_assert_eq!(&cast_value, &value);
            let found = validate(&schema, &cast_value);
            prop_assert!(found.is_empty(), "{:?} for {}", found, value);
        }

        #[test]
        fn integer_strings_cast_to_exactly_that_integer(n in any::<i64>(), pad in "[ \\t]{0,2}") {
            let text = format!("{pad}{n}{pad}");
            prop_assert_eq!(cast(&json!({"type": "integer"}), json!(text.clone())), json!(n));
            let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
            let cast_value = cast(&schema, json!({"n": text}));
            prop_assert_eq!(&cast_value, &json!({"n": n}));
            prop_assert!(validate(&schema, &cast_value).is_empty());
        }

        #[test]
        fn unsigned_strings_cast_to_exactly_that_integer(n in any::<u64>()) {
            prop_assert_eq!(cast(&json!({"type": "integer"}), json!(n.to_string())), json!(n));
        }
    }
}
