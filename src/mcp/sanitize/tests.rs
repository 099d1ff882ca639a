use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn run(v: Value) -> Result<Sanitized, String> {
    sanitize_schema(v.as_object().unwrap())
}

/// What OpenAI's and Anthropic's function calling check, as far as the sanitiser promises it.
fn acceptable(schema: &Value) -> Result<(), String> {
    let top = schema.as_object().ok_or("top is not an object")?;
    if top.get("type") != Some(&json!("object")) {
        return Err("top-level type is not object".into());
    }
    if !top.get("properties").is_some_and(Value::is_object) {
        return Err("top-level properties missing".into());
    }
    for key in ["anyOf", "oneOf", "allOf", "enum", "not", "const"] {
        if top.contains_key(key) {
            return Err(format!("top-level {key}"));
        }
    }
    check(schema, 0)
}

fn check(schema: &Value, depth: usize) -> Result<(), String> {
    let Some(map) = schema.as_object() else {
        return match schema {
            Value::Bool(_) => Ok(()),
            other => Err(format!("a schema is {other}")),
        };
    };
    let is = |name: &str| match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
        _ => false,
    };
    if is("array") && !map.get("items").is_some_and(|i| i.is_object() || i.is_boolean()) {
        return Err(format!("array without items: {schema}"));
    }
    if is("object") && !map.get("properties").is_some_and(Value::is_object) {
        return Err(format!("object without properties: {schema}"));
    }
    if let Some(required) = map.get("required")
        && !required.as_array().is_some_and(|r| r.iter().all(Value::is_string))
    {
        return Err(format!("bad required: {required}"));
    }
    if depth > MAX_DEPTH + 1 {
        return Err("too deep".into());
    }
    for (key, value) in map {
        if SCHEMA_MAPS.contains(&key.as_str()) {
            for child in value.as_object().into_iter().flat_map(|m| m.values()) {
                check(child, depth + 1)?;
            }
        } else if SCHEMA_LISTS.contains(&key.as_str()) {
            for child in value.as_array().into_iter().flatten() {
                check(child, depth + 1)?;
            }
        } else if SCHEMA_ONE.contains(&key.as_str()) {
            check(value, depth + 1)?;
        }
    }
    Ok(())
}

#[test]
fn arrays_get_items_and_top_level_any_of_is_flattened() {
    let out = run(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "anyOf": [
            {"type": "object", "properties": {"path": {"type": "string"}, "tags": {"type": "array"}}, "required": ["path"]},
            {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
            {"type": "null"}
        ]
    }))
    .unwrap();
    assert_eq!(
        out.schema,
        json!({"type": "object", "properties": {
            "path": {"type": "string"}, "tags": {"type": "array", "items": {}}, "url": {"type": "string"}}})
    );
    assert_eq!(
        out.changes,
        [
            "flattened the top-level `anyOf` (3 alternatives) into one object",
            "added `items` to the array at /properties/tags"
        ]
    );
    acceptable(&out.schema).unwrap();
}

#[test]
fn all_of_merges_requirements_and_a_top_ref_is_inlined() {
    let out = run(json!({
        "allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                  {"properties": {"b": true}, "required": ["b"]}]
    }))
    .unwrap();
    assert_eq!(
        out.schema,
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}, "required": ["a", "b"]})
    );
    let out = run(json!({"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object",
        "properties": {"q": {"type": "string"}}, "required": ["q"]}}}))
    .unwrap();
    assert_eq!(out.schema["properties"], json!({"q": {"type": "string"}}));
    assert_eq!(out.schema["required"], json!(["q"]));
    assert_eq!(out.changes, ["inlined the top-level $ref #/$defs/Args"]);
}

#[test]
fn old_drafts_and_odd_shapes_are_repaired() {
    let out = run(json!({"type": ["object", "null"], "enum": [{}], "properties": {
        "name": {"type": "string", "required": true},
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
        "map": {"type": "object", "additionalProperties": {"type": "array"}},
        "gone": false,
        "odd": {"type": "text"}
    }}))
    .unwrap();
    assert_eq!(
        out.schema,
        json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "pair": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "map": {"type": "object", "properties": {}, "additionalProperties": {"type": "array", "items": {}}},
            "odd": {}
        }})
    );
    assert_eq!(out.changes.len(), 8, "{:?}", out.changes);
    acceptable(&out.schema).unwrap();
}

#[test]
fn clean_schemas_pass_unchanged_and_non_objects_are_refused() {
    let clean = json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"],
        "additionalProperties": false, "$defs": {"P": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}});
    let out = run(clean.clone()).unwrap();
    assert_eq!((out.schema, out.changes), (clean, Vec::<String>::new()));
    assert_eq!(
        run(json!({})).unwrap().schema,
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(
        run(json!({"type": "string"})).unwrap_err(),
        "its input schema is of type \"string\", not an object"
    );
}

#[test]
fn deep_schemas_are_cut() {
    let mut deep = json!({"type": "string"});
    for _ in 0..100 {
        deep = json!({"type": "array", "items": deep});
    }
    let out = run(json!({"type": "object", "properties": {"deep": deep}})).unwrap();
    assert!(
        out.changes.iter().any(|c| c.contains("nested deeper")),
        "{:?}",
        out.changes
    );
    acceptable(&out.schema).unwrap();
}

fn schema_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({})),
        Just(json!(true)),
        Just(json!(false)),
        Just(json!(3)),
        Just(json!({"type": "string"})),
        Just(json!({"type": "array"})),
        Just(json!({"type": "object"})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "bogus"})),
        Just(json!({"type": 7})),
        Just(json!({"required": true})),
        Just(json!({"required": ["a", 1]})),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        let keys = prop_oneof![
            Just("properties"),
            Just("items"),
            Just("anyOf"),
            Just("oneOf"),
            Just("allOf"),
            Just("additionalProperties"),
            Just("$defs"),
            Just("prefixItems"),
            Just("not"),
            Just("type"),
            Just("required"),
            Just("enum"),
        ];
        prop::collection::vec((keys, prop::collection::vec(inner, 1..3)), 0..4).prop_map(|pairs| {
            let mut map = serde_json::Map::new();
            for (key, mut values) in pairs {
                let value = match key {
                    "properties" | "$defs" => Value::Object(
                        values
                            .drain(..)
                            .enumerate()
                            .map(|(i, v)| (format!("p{i}"), v))
                            .collect(),
                    ),
                    "anyOf" | "oneOf" | "allOf" | "prefixItems" | "enum" => Value::Array(values),
                    "type" => json!(["object", "array", "integer"][values.len() % 3]),
                    "required" => json!(["p0"]),
                    _ => values.swap_remove(0),
                };
                map.insert(key.to_string(), value);
            }
            Value::Object(map)
        })
    })
}

proptest! {
    #![proptest_config(tern_testkit::fuzz_config(256))]
    #[test]
    fn any_schema_becomes_acceptable_or_is_refused(schema in schema_value()) {
        let Value::Object(map) = &schema else { return Ok(()) };
        match sanitize_schema(map) {
            Ok(out) => {
                prop_assert!(acceptable(&out.schema).is_ok(), "{:?} from {schema}", acceptable(&out.schema));
                // A sanitised schema needs no further change.
                let again = sanitize_schema(out.schema.as_object().unwrap()).unwrap();
                prop_assert_eq!(again.changes, Vec::<String>::new());
                prop_assert_eq!(again.schema, out.schema);
            }
            Err(why) => prop_assert!(why.contains("not an object"), "{why}"),
        }
    }
}
