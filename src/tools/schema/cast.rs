//! `cast`: converts a value towards its schema where the intent is unambiguous. Never fails: what it cannot convert
//! it leaves alone for `validate` to report.

use serde_json::{Map, Number, Value};

use super::validate::check;
use super::{Ctx, Errors, MAX_DEPTH, effective_types, is_type, item_schema, json_eq, nullable};

pub(super) fn cast_node<'s>(cx: &mut Ctx<'s>, schema: &'s Value, value: Value, depth: usize) -> Value {
    let Value::Object(obj) = schema else {
        return value;
    };
    if depth > MAX_DEPTH || !cx.spend() || (value.is_null() && nullable(obj)) {
        return value;
    }
    let mut value = value;
    if let Some(target) = cx.target(obj) {
        value = cast_node(cx, target, value, depth + 1);
    }
    if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
        for sub in all {
            value = cast_node(cx, sub, value, depth + 1);
        }
    }
    value = cast_typed(cx, obj, value, depth);
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            value = cast_branches(cx, branches, value, depth);
        }
    }
    snap_to_enum(obj, value)
}

/// Converts a value whose type is not one the schema allows to the first allowed type it converts to cleanly, then
/// recurses into arrays and objects.
fn cast_typed<'s>(cx: &mut Ctx<'s>, obj: &'s Map<String, Value>, value: Value, depth: usize) -> Value {
    let types = effective_types(obj);
    if types.is_empty() {
        return value;
    }
    let value = if types.iter().any(|t| is_type(t, &value)) {
        value
    } else {
        match types.iter().find_map(|t| convert(t, &value)) {
            Some(converted) => converted,
            None => return value,
        }
    };
    match value {
        Value::Array(items) if types.contains(&"array") => Value::Array(cast_items(cx, obj, items, depth)),
        Value::Object(map) if types.contains(&"object") => Value::Object(cast_properties(cx, obj, map, depth)),
        other => other,
    }
}

/// `value` as JSON Schema type `name`, when the conversion loses nothing and guesses nothing.
fn convert(name: &str, value: &Value) -> Option<Value> {
    match (name, value) {
        ("integer", _) => to_integer(value),
        ("number", _) => to_number(value),
        ("boolean", _) => to_bool(value),
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("array", Value::String(s)) if s.trim_start().starts_with('[') => {
            serde_json::from_str::<Value>(s).ok().filter(Value::is_array)
        }
        ("object", Value::String(s)) if s.trim_start().starts_with('{') => {
            serde_json::from_str::<Value>(s).ok().filter(Value::is_object)
        }
        _ => None,
    }
}

/// "60", " 60 ", "6e1", "60.0" and 60.0 become 60; fractions, non-numbers and booleans do not convert.
fn to_integer(value: &Value) -> Option<Value> {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(value.clone()),
        Value::Number(n) => float_to_integer(n.as_f64()?),
        Value::String(s) => {
            let s = s.trim();
            if let Ok(i) = s.parse::<i64>() {
                return Some(Value::from(i));
            }
            if let Ok(u) = s.parse::<u64>() {
                return Some(Value::from(u));
            }
            float_to_integer(s.parse::<f64>().ok()?)
        }
        _ => None,
    }
}

fn float_to_integer(f: f64) -> Option<Value> {
    // 2^63 and 2^64 are exact in f64, so these bounds are the exact i64/u64 ranges.
    const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;
    const U64_BOUND: f64 = 18_446_744_073_709_551_616.0;
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    if (-I64_BOUND..I64_BOUND).contains(&f) {
        Some(Value::from(f as i64))
    } else if (0.0..U64_BOUND).contains(&f) {
        Some(Value::from(f as u64))
    } else {
        None
    }
}

/// Numeric strings become numbers, integers when they are written as integers ("60" -> 60, "2.5" -> 2.5).
fn to_number(value: &Value) -> Option<Value> {
    match value {
        Value::Number(_) => Some(value.clone()),
        Value::String(s) => {
            let s = s.trim();
            if let Ok(i) = s.parse::<i64>() {
                return Some(Value::from(i));
            }
            if let Ok(u) = s.parse::<u64>() {
                return Some(Value::from(u));
            }
            // Rust also parses "inf" and "NaN", which JSON cannot hold; from_f64 refuses them.
            Number::from_f64(s.parse::<f64>().ok()?).map(Value::Number)
        }
        _ => None,
    }
}

/// "true"/"yes"/"1" and "false"/"no"/"0" in any case, and the integers 1 and 0.
fn to_bool(value: &Value) -> Option<Value> {
    match value {
        Value::Bool(_) => Some(value.clone()),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Some(Value::Bool(true)),
            "false" | "no" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        Value::Number(n) => match n.as_u64() {
            Some(1) => Some(Value::Bool(true)),
            Some(0) => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    }
}

fn cast_items<'s>(cx: &mut Ctx<'s>, obj: &'s Map<String, Value>, items: Vec<Value>, depth: usize) -> Vec<Value> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item_schema(obj, i) {
            Some(schema) => cast_node(cx, schema, item, depth + 1),
            None => item,
        })
        .collect()
}

fn cast_properties<'s>(
    cx: &mut Ctx<'s>,
    obj: &'s Map<String, Value>,
    map: Map<String, Value>,
    depth: usize,
) -> Map<String, Value> {
    let properties = obj.get("properties").and_then(Value::as_object);
    let additional = obj.get("additionalProperties").filter(|s| s.is_object());
    let required = |key: &str| {
        obj.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|k| k.as_str() == Some(key)))
    };
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        if let Some(schema) = properties.and_then(|p| p.get(&key)) {
            // Models often send null for an optional argument they mean to omit.
            if value.is_null() && !required(&key) && !is_valid(cx, schema, &value, depth + 1) {
                continue;
            }
            let value = cast_node(cx, schema, value, depth + 1);
            out.insert(key, value);
        } else if let Some(schema) = additional {
            let value = cast_node(cx, schema, value, depth + 1);
            out.insert(key, value);
        } else {
            out.insert(key, value);
        }
    }
    out
}

/// A value valid under some branch is left alone; otherwise the first branch whose cast makes it valid wins.
fn cast_branches<'s>(cx: &mut Ctx<'s>, branches: &'s [Value], value: Value, depth: usize) -> Value {
    if branches.iter().any(|b| is_valid(cx, b, &value, depth + 1)) {
        return value;
    }
    for branch in branches {
        let candidate = cast_node(cx, branch, value.clone(), depth + 1);
        if is_valid(cx, branch, &candidate, depth + 1) {
            return candidate;
        }
    }
    value
}

fn is_valid<'s>(cx: &mut Ctx<'s>, schema: &'s Value, value: &Value, depth: usize) -> bool {
    let mut errors = Errors::default();
    check(cx, schema, value, &mut String::new(), &mut errors, depth);
    errors.is_empty()
}

/// A value not in `enum` becomes the one member it unambiguously denotes: equal by value (1.0 for 1), equal as
/// text ("2" for 2, "true" for true), or, failing that, equal as text ignoring case ("Content" for "content").
fn snap_to_enum(obj: &Map<String, Value>, value: Value) -> Value {
    let Some(members) = obj.get("enum").and_then(Value::as_array) else {
        return value;
    };
    if members.contains(&value) {
        return value;
    }
    if let Some(member) = members.iter().find(|m| json_eq(m, &value)) {
        return member.clone();
    }
    let Some(text) = scalar_text(&value) else {
        return value;
    };
    let unique = |same: &dyn Fn(&str) -> bool| {
        let mut found = members.iter().filter(|m| scalar_text(m).is_some_and(|t| same(&t)));
        match (found.next(), found.next()) {
            (Some(member), None) => Some(member.clone()),
            _ => None,
        }
    };
    unique(&|t| t == text)
        .or_else(|| unique(&|t| t.eq_ignore_ascii_case(&text)))
        .unwrap_or(value)
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::cast;

    fn int() -> serde_json::Value {
        json!({"type": "integer"})
    }

    #[test]
    fn integers_from_strings_and_whole_floats() {
        assert_eq!(cast(&int(), json!("60")), json!(60));
        assert_eq!(cast(&int(), json!(" -7 ")), json!(-7));
        assert_eq!(cast(&int(), json!("5.0")), json!(5));
        assert_eq!(cast(&int(), json!("6e1")), json!(60));
        assert_eq!(cast(&int(), json!(5.0)), json!(5));
        assert_eq!(cast(&int(), json!(-0.0)), json!(0));
        assert_eq!(cast(&int(), json!("18446744073709551615")), json!(u64::MAX));
        assert_eq!(cast(&int(), json!(1e19)), json!(10_000_000_000_000_000_000_u64));
    }

    #[test]
    fn integers_refuse_fractions_junk_and_out_of_range() {
        assert_eq!(cast(&int(), json!("5.5")), json!("5.5"));
        assert_eq!(cast(&int(), json!(5.5)), json!(5.5));
        assert_eq!(cast(&int(), json!("abc")), json!("abc"));
        assert_eq!(cast(&int(), json!("")), json!(""));
        assert_eq!(cast(&int(), json!("inf")), json!("inf"));
        assert_eq!(cast(&int(), json!(1e20)), json!(1e20));
        assert_eq!(cast(&int(), json!([1])), json!([1]));
    }

    #[test]
    fn bools_never_become_numbers() {
        assert_eq!(cast(&int(), json!(true)), json!(true));
        assert_eq!(cast(&int(), json!(false)), json!(false));
        assert_eq!(cast(&json!({"type": "number"}), json!(true)), json!(true));
    }

    #[test]
    fn numbers_from_strings() {
        let number = json!({"type": "number"});
        assert_eq!(cast(&number, json!("2.5")), json!(2.5));
        assert_eq!(cast(&number, json!("60")), json!(60));
        assert_eq!(cast(&number, json!(" -1e3 ")), json!(-1000.0));
        assert_eq!(cast(&number, json!("NaN")), json!("NaN"));
        assert_eq!(cast(&number, json!("infinity")), json!("infinity"));
        assert_eq!(cast(&number, json!(7)), json!(7));
    }

    #[test]
    fn booleans_from_words_and_bits() {
        let boolean = json!({"type": "boolean"});
        for yes in ["true", "TRUE", "Yes", "1", " true "] {
            assert_eq!(cast(&boolean, json!(yes)), json!(true), "{yes}");
        }
        for no in ["false", "False", "NO", "0"] {
            assert_eq!(cast(&boolean, json!(no)), json!(false), "{no}");
        }
        assert_eq!(cast(&boolean, json!(1)), json!(true));
        assert_eq!(cast(&boolean, json!(0)), json!(false));
        assert_eq!(cast(&boolean, json!(2)), json!(2));
        assert_eq!(cast(&boolean, json!("maybe")), json!("maybe"));
    }

    #[test]
    fn scalars_become_strings_but_structures_do_not() {
        let string = json!({"type": "string"});
        assert_eq!(cast(&string, json!(5)), json!("5"));
        assert_eq!(cast(&string, json!(2.5)), json!("2.5"));
        assert_eq!(cast(&string, json!(true)), json!("true"));
        assert_eq!(cast(&string, json!({"a": 1})), json!({"a": 1}));
        assert_eq!(cast(&string, json!(["a"])), json!(["a"]));
        assert_eq!(cast(&string, json!(null)), json!(null));
    }

    #[test]
    fn json_text_parsed_for_arrays_and_objects() {
        let list = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(cast(&list, json!("[1, \"2\"]")), json!([1, 2]));
        assert_eq!(cast(&list, json!("[oops")), json!("[oops"));
        assert_eq!(cast(&list, json!("{\"a\": 1}")), json!("{\"a\": 1}"));
        let object = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(cast(&object, json!(" {\"n\": \"3\"}")), json!({"n": 3}));
        assert_eq!(cast(&object, json!("[1]")), json!("[1]"));
    }

    #[test]
    fn recurses_into_items_properties_and_additional_properties() {
        let schema = json!({
            "type": "object",
            "properties": {
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"line": {"type": "integer"}, "all": {"type": "boolean"}}
                }},
            },
            "additionalProperties": {"type": "number"},
        });
        let value = json!({"edits": [{"line": "3", "all": "yes"}, {"line": 4.0}], "extra": "1.5"});
        let expected = json!({"edits": [{"line": 3, "all": true}, {"line": 4}], "extra": 1.5});
        assert_eq!(cast(&schema, value), expected);
    }

    #[test]
    fn tuples_cast_by_position() {
        let schema = json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "items": {"type": "boolean"}});
        assert_eq!(
            cast(&schema, json!(["1", 2, "no", "yes"])),
            json!([1, "2", false, true])
        );
        let draft4 = json!({"items": [{"type": "integer"}], "additionalItems": {"type": "string"}});
        assert_eq!(cast(&draft4, json!(["1", 2])), json!([1, "2"]));
    }

    #[test]
    fn type_lists_keep_matching_values_and_convert_to_first_that_fits() {
        let either = json!({"type": ["integer", "string"]});
        assert_eq!(cast(&either, json!("5")), json!("5"));
        assert_eq!(cast(&either, json!(5.5)), json!("5.5"));
        let maybe = json!({"type": ["integer", "null"]});
        assert_eq!(cast(&maybe, json!("5")), json!(5));
        assert_eq!(cast(&maybe, json!(null)), json!(null));
        let nullable = json!({"type": "integer", "nullable": true});
        assert_eq!(cast(&nullable, json!(null)), json!(null));
        assert_eq!(cast(&nullable, json!("8")), json!(8));
    }

    #[test]
    fn any_of_with_null_and_refs() {
        let schema = json!({
            "$defs": {"Count": {"type": "integer"}},
            "definitions": {"Flag": {"type": "boolean"}},
            "type": "object",
            "properties": {
                "n": {"anyOf": [{"$ref": "#/$defs/Count"}, {"type": "null"}]},
                "f": {"$ref": "#/definitions/Flag"},
            },
        });
        assert_eq!(cast(&schema, json!({"n": "4", "f": "no"})), json!({"n": 4, "f": false}));
        assert_eq!(cast(&schema, json!({"n": null})), json!({"n": null}));
        assert_eq!(cast(&schema, json!({"n": "x"})), json!({"n": "x"}));
    }

    #[test]
    fn all_of_applies_every_part() {
        let schema = json!({"allOf": [{"properties": {"a": {"type": "integer"}}},
            {"properties": {"b": {"type": "string"}}}]});
        assert_eq!(cast(&schema, json!({"a": "1", "b": 2})), json!({"a": 1, "b": "2"}));
    }

    #[test]
    fn enum_values_snap_only_when_unambiguous() {
        let mode = json!({"type": "string", "enum": ["content", "count"]});
        assert_eq!(cast(&mode, json!("Content")), json!("content"));
        assert_eq!(cast(&mode, json!("lines")), json!("lines"));
        let numbers = json!({"enum": [1, 2, 3]});
        assert_eq!(cast(&numbers, json!("2")), json!(2));
        assert_eq!(cast(&numbers, json!(2.0)), json!(2));
        assert_eq!(cast(&numbers, json!(true)), json!(true));
        let clash = json!({"enum": ["Ab", "aB"]});
        assert_eq!(cast(&clash, json!("ab")), json!("ab"));
        assert_eq!(cast(&clash, json!("aB")), json!("aB"));
    }

    #[test]
    fn null_for_optional_property_is_dropped() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer"},
                "note": {"type": ["string", "null"]},
            },
            "required": ["path"],
        });
        let value = json!({"path": null, "limit": null, "note": null});
        assert_eq!(cast(&schema, value), json!({"path": null, "note": null}));
    }

    #[test]
    fn unknown_shapes_are_left_alone() {
        let value = json!({"a": ["1", {"b": "true"}]});
        for schema in [
            json!({}),
            json!(true),
            json!(false),
            json!(null),
            json!("object"),
            json!({"type": 5}),
            json!({"type": "any"}),
            json!({"items": "x", "properties": 3}),
            json!({"$ref": "https://x/y.json"}),
            json!({"$ref": "#/nowhere"}),
            json!({"enum": "a"}),
        ] {
            assert_eq!(cast(&schema, value.clone()), value, "{schema}");
        }
    }

    #[test]
    fn recursive_refs_terminate() {
        let looping = json!({"$ref": "#"});
        assert_eq!(cast(&looping, json!("1")), json!("1"));
        let branching = json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"type": "integer"}]});
        assert_eq!(cast(&branching, json!("1")), json!("1"));
        let tree = json!({
            "$defs": {"node": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            }}},
            "$ref": "#/$defs/node",
        });
        let value = json!({"size": "1", "children": [{"size": "2", "children": [{"size": "3"}]}]});
        let expected = json!({"size": 1, "children": [{"size": 2, "children": [{"size": 3}]}]});
        assert_eq!(cast(&tree, value), expected);
    }
}
