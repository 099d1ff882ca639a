//! Making an MCP tool's input schema acceptable to every provider's function calling before it is offered.
//!
//! Servers write schemas for validators, not for models: OpenAI rejects a request whose tools hold an array without
//! `items`, a top-level `anyOf`/`oneOf`/`allOf`/`enum`/`not`, or a `required` that is not a list; Anthropic wants a
//! top-level object schema. One such tool would fail every request of the session, so each schema is rewritten into
//! the shape both accept: what can be fixed is fixed (and each change named, for the log), and a schema that cannot
//! describe an object of arguments is refused, so the caller leaves that one tool out. The rewrite only ever loosens
//! what the model may send; the server still validates the arguments it gets.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value, json};

/// Subschemas nested deeper than this are replaced by `{}`: no real tool needs them, and a hostile schema must not
/// cost a deep recursion on every request.
const MAX_DEPTH: usize = 32;
/// The type names JSON Schema knows.
const TYPES: &[&str] = &["object", "array", "string", "number", "integer", "boolean", "null"];
/// Keywords that no provider accepts at the top of a tool's parameters.
const TOP_LEVEL_DROPPED: &[&str] = &["enum", "const", "not", "if", "then", "else"];
/// Keywords whose value is a map of subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value is one subschema.
const SCHEMA_ONE: &[&str] = &["items", "additionalProperties", "not", "contains", "if", "then", "else"];

/// A schema ready to offer, and what had to change (empty when nothing did).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sanitized {
    pub schema: Value,
    pub changes: Vec<String>,
}

/// Rewrites a tool's input schema for function calling. `Err` says why no object schema could be made of it.
pub(crate) fn sanitize_schema(input: &Map<String, Value>) -> Result<Sanitized, String> {
    let mut schema = input.clone();
    let mut changes = Vec::new();
    // Markers that only cost tokens.
    for key in ["$schema", "$id", "$comment"] {
        schema.remove(key);
    }
    inline_top_ref(&mut schema, &mut changes);
    match schema.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(Value::Array(types)) if types.iter().any(|t| t == "object") => {
            changes.push(format!(
                "the top-level type {} became \"object\"",
                Value::Array(types.clone())
            ));
        }
        Some(other) => return Err(format!("its input schema is of type {other}, not an object")),
    }
    schema.insert("type".into(), Value::String("object".into()));
    flatten_top_combinators(&mut schema, &mut changes);
    for key in TOP_LEVEL_DROPPED {
        if schema.remove(*key).is_some() {
            changes.push(format!("dropped the top-level `{key}`"));
        }
    }
    if !schema.get("properties").is_some_and(Value::is_object) {
        if schema.contains_key("properties") {
            changes.push("replaced `properties` that was not an object".into());
        }
        schema.insert("properties".into(), json!({}));
    }
    fix_object(&mut schema, "", 0, &mut changes);
    Ok(Sanitized {
        schema: Value::Object(schema),
        changes,
    })
}

/// Logs a tool's changes once per process (the tool list is rebuilt on every change of any server).
pub(crate) fn log_once(server: &str, tool: &str, outcome: &Result<Sanitized, String>) {
    static LOGGED: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let key = match outcome {
        Ok(s) if s.changes.is_empty() => return,
        Ok(s) => format!("{server}\0{tool}\0{}", s.changes.join("\0")),
        Err(why) => format!("{server}\0{tool}\0!{why}"),
    };
    let logged = LOGGED.get_or_init(Mutex::default);
    let Ok(mut logged) = logged.lock() else { return };
    if logged.len() > 10_000 {
        logged.clear();
    }
    if !logged.insert(key) {
        return;
    }
    match outcome {
        Ok(s) => {
            tracing::warn!(server, tool, changes = %s.changes.join("; "), "MCP tool schema changed to suit providers")
        }
        Err(why) => tracing::warn!(server, tool, %why, "MCP tool left out: its input schema cannot be offered"),
    }
}

/// A top-level `$ref` into the schema's own `$defs`/`definitions` is replaced by what it points at: providers read
/// the top level for `type` and `properties`.
fn inline_top_ref(schema: &mut Map<String, Value>, changes: &mut Vec<String>) {
    let Some(Value::String(reference)) = schema.get("$ref").cloned() else {
        return;
    };
    let target = ["#/$defs/", "#/definitions/"].iter().find_map(|prefix| {
        let name = reference.strip_prefix(prefix)?;
        let defs = prefix.trim_start_matches("#/").trim_end_matches('/');
        schema.get(defs)?.get(name)?.as_object().cloned()
    });
    schema.remove("$ref");
    match target {
        Some(target) => {
            for (k, v) in target {
                schema.entry(k).or_insert(v);
            }
            changes.push(format!("inlined the top-level $ref {reference}"));
        }
        None => changes.push(format!(
            "dropped the top-level $ref {reference}, which points outside the schema"
        )),
    }
}

/// Top-level `allOf` merges into one object (every branch's properties and requirements); `anyOf`/`oneOf` merge the
/// object branches' properties and keep only what every branch requires, so any alternative can still be sent.
fn flatten_top_combinators(schema: &mut Map<String, Value>, changes: &mut Vec<String>) {
    for key in ["allOf", "anyOf", "oneOf"] {
        let Some(branches) = schema.remove(key) else {
            continue;
        };
        let branches: Vec<Map<String, Value>> = match branches {
            Value::Array(list) => list
                .into_iter()
                .filter_map(|b| match b {
                    Value::Object(map) => Some(map),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        let count = branches.len();
        let mut properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut required = string_list(schema.get("required"));
        let mut shared: Option<Vec<String>> = None;
        for branch in &branches {
            let is_object = branch.get("properties").is_some()
                || match branch.get("type") {
                    None => true,
                    Some(Value::String(t)) => t == "object",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                    Some(_) => false,
                };
            if !is_object {
                continue;
            }
            if let Some(props) = branch.get("properties").and_then(Value::as_object) {
                for (name, sub) in props {
                    properties.entry(name.clone()).or_insert_with(|| sub.clone());
                }
            }
            let wants = string_list(branch.get("required"));
            if key == "allOf" {
                required.extend(wants);
            } else {
                shared = Some(match shared {
                    None => wants,
                    Some(before) => before.into_iter().filter(|r| wants.contains(r)).collect(),
                });
            }
        }
        required.extend(shared.unwrap_or_default());
        let mut seen = HashSet::new();
        required.retain(|r| seen.insert(r.clone()));
        schema.insert("properties".into(), Value::Object(properties));
        if required.is_empty() {
            schema.remove("required");
        } else {
            schema.insert("required".into(), json!(required));
        }
        changes.push(format!(
            "flattened the top-level `{key}` ({count} alternatives) into one object"
        ));
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Fixes one subschema in place: boolean `true` schemas become `{}`, arrays get `items`, objects get `properties`,
/// a `required` that is not a list of names and `type` values that are not type names are dropped; then its own
/// subschemas, down to `MAX_DEPTH`.
fn fix(value: &mut Value, path: &str, depth: usize, changes: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        if !matches!(value, Value::Object(m) if m.is_empty()) {
            changes.push(format!(
                "cut the schema at {path}, nested deeper than {MAX_DEPTH} levels"
            ));
        }
        *value = json!({});
        return;
    }
    match value {
        Value::Object(map) => fix_object(map, path, depth, changes),
        Value::Bool(true) => *value = json!({}),
        // `false` (nothing is valid) is meaningful only where it stands, and every provider accepts it in
        // `additionalProperties`; elsewhere it is handled by the caller.
        Value::Bool(false) => {}
        _ => {
            changes.push(format!("replaced {path}, which was {value} instead of a schema"));
            *value = json!({});
        }
    }
}

/// Fixes one object subschema in place: its `type`, what arrays and objects need, `required`, then its own
/// subschemas.
fn fix_object(map: &mut Map<String, Value>, path: &str, depth: usize, changes: &mut Vec<String>) {
    let at = if path.is_empty() { "the top level" } else { path };
    fix_type(map, at, changes);
    fix_shape(map, path, at, changes);
    fix_children(map, path, at, depth, changes);
}

/// Drops `type` values that are not type names (`at` names the subschema for the change).
fn fix_type(map: &mut Map<String, Value>, at: &str, changes: &mut Vec<String>) {
    match map.get_mut("type") {
        Some(Value::String(t)) if !TYPES.contains(&t.as_str()) => {
            changes.push(format!("dropped the unknown type {t:?} at {at}"));
            map.remove("type");
        }
        Some(Value::Array(types)) => {
            let before = types.len();
            types.retain(|t| t.as_str().is_some_and(|t| TYPES.contains(&t)));
            if types.is_empty() {
                map.remove("type");
            }
            if map.get("type").and_then(Value::as_array).map(Vec::len) != Some(before) {
                changes.push(format!("dropped unknown types at {at}"));
            }
        }
        Some(Value::String(_)) | None => {}
        Some(_) => {
            changes.push(format!("dropped a `type` that was not a name at {at}"));
            map.remove("type");
        }
    }
}

/// Gives an array `items` (one schema, not a tuple) and an object `properties`, and makes `required` a list of names.
fn fix_shape(map: &mut Map<String, Value>, path: &str, at: &str, changes: &mut Vec<String>) {
    let has_type = |map: &Map<String, Value>, name: &str| match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
        _ => false,
    };
    if has_type(map, "array") {
        match map.get("items") {
            None => {
                map.insert("items".into(), json!({}));
                changes.push(format!("added `items` to the array at {at}"));
            }
            Some(Value::Array(tuple)) => {
                let items = match tuple.len() {
                    0 => json!({}),
                    1 => tuple[0].clone(),
                    _ => json!({"anyOf": tuple}),
                };
                map.insert("items".into(), items);
                changes.push(format!("turned the tuple `items` at {at} into one schema"));
            }
            Some(_) => {}
        }
    }
    if has_type(map, "object") && !map.get("properties").is_some_and(Value::is_object) {
        if map.contains_key("properties") {
            changes.push(format!("replaced `properties` that was not an object at {at}"));
        } else if !path.is_empty() {
            changes.push(format!("added `properties` to the object at {at}"));
        }
        map.insert("properties".into(), json!({}));
    }
    if let Some(required) = map.get("required")
        && !required.as_array().is_some_and(|r| r.iter().all(Value::is_string))
    {
        let names = string_list(Some(required));
        if names.is_empty() {
            map.remove("required");
        } else {
            map.insert("required".into(), json!(names));
        }
        changes.push(format!("dropped a `required` that was not a list of names at {at}"));
    }
}

/// Fixes the subschemas `map` holds, one level deeper, dropping the properties whose schema is `false`.
fn fix_children(map: &mut Map<String, Value>, path: &str, at: &str, depth: usize, changes: &mut Vec<String>) {
    for key in SCHEMA_MAPS {
        let Some(Value::Object(children)) = map.get_mut(*key) else {
            continue;
        };
        let mut refused = Vec::new();
        for (name, child) in children.iter_mut() {
            if *child == Value::Bool(false) && *key == "properties" {
                refused.push(name.clone());
                continue;
            }
            fix(child, &format!("{path}/{key}/{name}"), depth + 1, changes);
        }
        for name in refused {
            children.remove(&name);
            changes.push(format!("dropped the property {name:?} whose schema is `false` at {at}"));
        }
    }
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(children)) = map.get_mut(*key) {
            for (i, child) in children.iter_mut().enumerate() {
                fix(child, &format!("{path}/{key}/{i}"), depth + 1, changes);
            }
        }
    }
    for key in SCHEMA_ONE {
        if let Some(child) = map.get_mut(*key) {
            fix(child, &format!("{path}/{key}"), depth + 1, changes);
        }
    }
}

#[cfg(test)]
mod tests;
