//! `validate`: checks a value against its schema and reports each problem with the path it was found at.

use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use super::{
    Ctx, Errors, MAX_DEPTH, TOO_COMPLEX, cmp_numbers, declared_types, effective_types, is_type, item_schema, json_eq,
    label, nullable, plural, push_index, push_key, render, render_list,
};

/// Arrays longer than this are not checked for `uniqueItems` (quadratic).
const MAX_UNIQUE_CHECK: usize = 1000;

pub(super) fn check<'s>(
    cx: &mut Ctx<'s>,
    schema: &'s Value,
    value: &Value,
    path: &mut String,
    errors: &mut Errors,
    depth: usize,
) {
    let obj = match schema {
        Value::Object(obj) => obj,
        Value::Bool(false) => return errors.push(format!("{} is not allowed", label(path))),
        // `true`, and anything malformed, accepts everything.
        _ => return,
    };
    if depth > MAX_DEPTH {
        return errors.push(format!("{} is nested too deeply", label(path)));
    }
    if !cx.spend() {
        return errors.push(TOO_COMPLEX.to_string());
    }
    if value.is_null() && nullable(obj) {
        return;
    }
    if let Some(target) = cx.target(obj) {
        check(cx, target, value, path, errors, depth + 1);
    }
    // Other keywords would only restate a type mismatch.
    if !check_type(obj, value, path, errors) {
        return;
    }
    check_enum_const(obj, value, path, errors);
    match value {
        Value::Number(n) => check_number(obj, n, path, errors),
        Value::String(s) => check_string(cx, obj, s, path, errors),
        Value::Array(items) => check_array(cx, obj, items, path, errors, depth),
        Value::Object(map) => check_object(cx, obj, map, path, errors, depth),
        Value::Null | Value::Bool(_) => {}
    }
    if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
        for sub in all {
            check(cx, sub, value, path, errors, depth + 1);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            check_branches(cx, branches, value, path, errors, depth);
        }
    }
    if let Some(not) = obj.get("not") {
        let mut sub = Errors::default();
        check(cx, not, value, path, &mut sub, depth + 1);
        if sub.is_empty() {
            errors.push(format!("{} must not match {}", label(path), render(not)));
        }
    }
}

fn check_type(obj: &Map<String, Value>, value: &Value, path: &str, errors: &mut Errors) -> bool {
    let mut types = declared_types(obj);
    if types.is_empty() || types.iter().any(|t| is_type(t, value)) {
        return true;
    }
    if nullable(obj) && !types.contains(&"null") {
        types.push("null");
    }
    errors.push(format!("{} should be {}", label(path), types.join(" or ")));
    false
}

fn check_enum_const(obj: &Map<String, Value>, value: &Value, path: &str, errors: &mut Errors) {
    if let Some(members) = obj.get("enum").and_then(Value::as_array)
        && !members.iter().any(|m| json_eq(m, value))
    {
        errors.push(format!("{} must be one of {}", label(path), render_list(members)));
    }
    if let Some(expected) = obj.get("const")
        && !json_eq(expected, value)
    {
        errors.push(format!("{} must be {}", label(path), render(expected)));
    }
}

fn check_number(obj: &Map<String, Value>, n: &Number, path: &str, errors: &mut Errors) {
    let bound = |key: &str| obj.get(key).and_then(Value::as_number);
    // Draft 4 spells exclusive bounds as booleans beside minimum/maximum; later drafts as numbers.
    let strict = |key: &str| obj.get(key) == Some(&Value::Bool(true));
    let mut limit = |bound: &Number, strict: bool, below: bool| {
        let order = cmp_numbers(n, bound);
        let broken = match (below, strict) {
            (false, false) => order == Some(Ordering::Less),
            (false, true) => matches!(order, Some(Ordering::Less | Ordering::Equal)),
            (true, false) => order == Some(Ordering::Greater),
            (true, true) => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
        };
        if broken {
            let op = match (below, strict) {
                (false, false) => ">=",
                (false, true) => ">",
                (true, false) => "<=",
                (true, true) => "<",
            };
            errors.push(format!("{} must be {op} {bound}", label(path)));
        }
    };
    if let Some(min) = bound("minimum") {
        limit(min, strict("exclusiveMinimum"), false);
    }
    if let Some(min) = bound("exclusiveMinimum") {
        limit(min, true, false);
    }
    if let Some(max) = bound("maximum") {
        limit(max, strict("exclusiveMaximum"), true);
    }
    if let Some(max) = bound("exclusiveMaximum") {
        limit(max, true, true);
    }
    if let Some(step) = bound("multipleOf").filter(|step| !is_multiple(n, step)) {
        errors.push(format!("{} must be a multiple of {step}", label(path)));
    }
}

/// Non-positive steps are malformed and ignored; floats compare with a relative tolerance.
fn is_multiple(n: &Number, step: &Number) -> bool {
    if let (Some(x), Some(d @ 1..)) = (n.as_i64(), step.as_i64()) {
        return x % d == 0;
    }
    if let (Some(x), Some(d @ 1..)) = (n.as_u64(), step.as_u64()) {
        return x % d == 0;
    }
    match (n.as_f64(), step.as_f64()) {
        (Some(x), Some(d)) if d > 0.0 && d.is_finite() => {
            let q = x / d;
            !q.is_finite() || (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
        }
        _ => true,
    }
}

fn check_string<'s>(cx: &mut Ctx<'s>, obj: &'s Map<String, Value>, s: &str, path: &str, errors: &mut Errors) {
    let min = obj.get("minLength").and_then(Value::as_u64);
    let max = obj.get("maxLength").and_then(Value::as_u64);
    if min.is_some() || max.is_some() {
        let len = s.chars().count() as u64;
        if let Some(min) = min.filter(|&m| len < m) {
            let unit = plural(min, "character", "characters");
            errors.push(format!("{} must be at least {min} {unit}", label(path)));
        }
        if let Some(max) = max.filter(|&m| len > m) {
            let unit = plural(max, "character", "characters");
            errors.push(format!("{} must be at most {max} {unit}", label(path)));
        }
    }
    if let Some(pattern) = obj.get("pattern").and_then(Value::as_str)
        && cx.regex_match(pattern, s) == Some(false)
    {
        let shown = render(&Value::String(pattern.to_string()));
        errors.push(format!("{} must match pattern {shown}", label(path)));
    }
}

fn check_array<'s>(
    cx: &mut Ctx<'s>,
    obj: &'s Map<String, Value>,
    items: &[Value],
    path: &mut String,
    errors: &mut Errors,
    depth: usize,
) {
    let count = items.len() as u64;
    if let Some(min) = obj.get("minItems").and_then(Value::as_u64).filter(|&m| count < m) {
        let unit = plural(min, "item", "items");
        errors.push(format!("{} must have at least {min} {unit}", label(path)));
    }
    if let Some(max) = obj.get("maxItems").and_then(Value::as_u64).filter(|&m| count > m) {
        let unit = plural(max, "item", "items");
        errors.push(format!("{} must have at most {max} {unit}", label(path)));
    }
    if obj.get("uniqueItems") == Some(&Value::Bool(true))
        && items.len() <= MAX_UNIQUE_CHECK
        && items
            .iter()
            .enumerate()
            .any(|(i, a)| items[i + 1..].iter().any(|b| json_eq(a, b)))
    {
        errors.push(format!("{} must not contain duplicate items", label(path)));
    }
    for (i, item) in items.iter().enumerate() {
        if let Some(schema) = item_schema(obj, i) {
            let mark = push_index(path, i);
            check(cx, schema, item, path, errors, depth + 1);
            path.truncate(mark);
        }
    }
}

fn check_object<'s>(
    cx: &mut Ctx<'s>,
    obj: &'s Map<String, Value>,
    map: &Map<String, Value>,
    path: &mut String,
    errors: &mut Errors,
    depth: usize,
) {
    if let Some(required) = obj.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                let mark = push_key(path, key);
                errors.push(format!("missing required {}", label(path)));
                path.truncate(mark);
            }
        }
    }
    let count = map.len() as u64;
    if let Some(min) = obj.get("minProperties").and_then(Value::as_u64).filter(|&m| count < m) {
        let unit = plural(min, "property", "properties");
        errors.push(format!("{} must have at least {min} {unit}", label(path)));
    }
    if let Some(max) = obj.get("maxProperties").and_then(Value::as_u64).filter(|&m| count > m) {
        let unit = plural(max, "property", "properties");
        errors.push(format!("{} must have at most {max} {unit}", label(path)));
    }
    let properties = obj.get("properties").and_then(Value::as_object);
    let patterns = obj.get("patternProperties").and_then(Value::as_object);
    let additional = obj.get("additionalProperties");
    for (key, value) in map {
        let mark = push_key(path, key);
        let mut declared = false;
        if let Some(schema) = properties.and_then(|p| p.get(key)) {
            declared = true;
            check(cx, schema, value, path, errors, depth + 1);
        }
        for (pattern, schema) in patterns.into_iter().flatten() {
            match cx.regex_match(pattern, key) {
                Some(true) => {
                    declared = true;
                    check(cx, schema, value, path, errors, depth + 1);
                }
                // A pattern we cannot evaluate might have covered the key: do not call it unexpected.
                None => declared = true,
                Some(false) => {}
            }
        }
        if !declared {
            match additional {
                Some(Value::Bool(false)) => errors.push(format!("unexpected parameter {}", label(path))),
                Some(schema @ Value::Object(_)) => check(cx, schema, value, path, errors, depth + 1),
                _ => {}
            }
        }
        path.truncate(mark);
    }
}

/// Valid when any branch is. Otherwise the errors of the closest branch the value's type fits (fewest errors), or,
/// when it fits none, one message naming the types the branches accept.
fn check_branches<'s>(
    cx: &mut Ctx<'s>,
    branches: &'s [Value],
    value: &Value,
    path: &mut String,
    errors: &mut Errors,
    depth: usize,
) {
    if branches.is_empty() {
        return;
    }
    let mut closest: Option<Errors> = None;
    let mut wanted: Vec<&str> = Vec::new();
    for branch in branches {
        let mut sub = Errors::default();
        check(cx, branch, value, path, &mut sub, depth + 1);
        if sub.is_empty() {
            return;
        }
        match branch_types(cx, branch) {
            Some(types) if !types.iter().any(|t| is_type(t, value)) => {
                for t in types {
                    if !wanted.contains(&t) {
                        wanted.push(t);
                    }
                }
            }
            _ => {
                if closest.as_ref().is_none_or(|c| sub.count() < c.count()) {
                    closest = Some(sub);
                }
            }
        }
    }
    match closest {
        Some(sub) => errors.absorb(sub),
        None if !wanted.is_empty() => errors.push(format!("{} should be {}", label(path), wanted.join(" or "))),
        None => errors.push(format!("{} does not match any allowed form", label(path))),
    }
}

/// The types a branch accepts (following `$ref`s), None when it does not say. `false` accepts no type.
fn branch_types<'s>(cx: &Ctx<'s>, mut schema: &'s Value) -> Option<Vec<&'s str>> {
    for _ in 0..MAX_DEPTH {
        let obj = match schema {
            Value::Object(obj) => obj,
            Value::Bool(false) => return Some(Vec::new()),
            _ => return None,
        };
        let mut types = effective_types(obj);
        if types.is_empty() {
            schema = cx.target(obj)?;
            continue;
        }
        if nullable(obj) {
            types.push("null");
        }
        return Some(types);
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::validate;

    fn errors(schema: Value, value: Value) -> Vec<String> {
        validate(&schema, &value)
    }

    fn one(schema: Value, value: Value) -> String {
        let found = errors(schema, value);
        assert_eq!(found.len(), 1, "{found:?}");
        found[0].clone()
    }

    fn object(properties: Value) -> Value {
        json!({"type": "object", "properties": properties, "additionalProperties": false})
    }

    #[test]
    fn types_each_and_listed() {
        let cases = [
            ("string", json!(1)),
            ("integer", json!(1.5)),
            ("integer", json!("1")),
            ("number", json!("1")),
            ("boolean", json!(1)),
            ("array", json!({})),
            ("object", json!([])),
            ("null", json!(0)),
        ];
        for (name, value) in cases {
            let schema = object(json!({"x": {"type": name}}));
            assert_eq!(one(schema, json!({"x": value})), format!("x should be {name}"));
        }
        assert!(errors(json!({"type": "number"}), json!(3)).is_empty());
        assert!(errors(json!({"type": "integer"}), json!(u64::MAX)).is_empty());
        let listed = object(json!({"x": {"type": ["string", "null"]}}));
        assert!(errors(listed.clone(), json!({"x": null})).is_empty());
        assert_eq!(one(listed, json!({"x": 3})), "x should be string or null");
        assert_eq!(one(json!({"type": "object"}), json!(3)), "parameters should be object");
    }

    #[test]
    fn nullable_accepts_null_only() {
        let schema = object(json!({"offset": {"type": "integer", "nullable": true, "minimum": 1}}));
        assert!(errors(schema.clone(), json!({"offset": null})).is_empty());
        assert_eq!(
            one(schema.clone(), json!({"offset": "x"})),
            "offset should be integer or null"
        );
        assert_eq!(one(schema, json!({"offset": 0})), "offset must be >= 1");
    }

    #[test]
    fn enum_and_const() {
        let schema = object(json!({"mode": {"type": "string", "enum": ["a", "b"]}, "v": {"const": 2}}));
        assert_eq!(
            one(schema.clone(), json!({"mode": "c"})),
            r#"mode must be one of ["a", "b"]"#
        );
        assert!(errors(schema.clone(), json!({"mode": "b", "v": 2.0})).is_empty());
        assert_eq!(one(schema, json!({"v": "2"})), "v must be 2");
    }

    #[test]
    fn numeric_bounds() {
        let schema = object(json!({
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "old": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 5, "exclusiveMaximum": true},
            "step": {"type": "number", "multipleOf": 0.5},
        }));
        assert_eq!(one(schema.clone(), json!({"limit": 0})), "limit must be >= 1");
        assert_eq!(one(schema.clone(), json!({"limit": 1001})), "limit must be <= 1000");
        assert_eq!(one(schema.clone(), json!({"ratio": 0})), "ratio must be > 0");
        assert_eq!(one(schema.clone(), json!({"ratio": 1.0})), "ratio must be < 1");
        assert_eq!(one(schema.clone(), json!({"old": 0})), "old must be > 0");
        assert_eq!(one(schema.clone(), json!({"old": 5})), "old must be < 5");
        assert_eq!(
            one(schema.clone(), json!({"step": 1.25})),
            "step must be a multiple of 0.5"
        );
        let fine = json!({"limit": 1000, "ratio": 0.5, "old": 4.9, "step": 2.5});
        assert!(errors(schema, fine).is_empty());
        assert_eq!(one(json!({"maximum": -1}), json!(u64::MAX)), "parameters must be <= -1");
    }

    #[test]
    fn string_lengths_count_characters_and_patterns_are_optional() {
        let schema = object(json!({
            "path": {"type": "string", "minLength": 1},
            "code": {"type": "string", "maxLength": 3, "pattern": "^[a-zé]+$"},
            "odd": {"type": "string", "pattern": "(?<=a)b"},
        }));
        assert_eq!(
            one(schema.clone(), json!({"path": ""})),
            "path must be at least 1 character"
        );
        assert!(errors(schema.clone(), json!({"code": "ééé", "odd": "zzz"})).is_empty());
        assert_eq!(
            one(schema.clone(), json!({"code": "abcd"})),
            "code must be at most 3 characters"
        );
        assert_eq!(
            one(schema, json!({"code": "A1"})),
            r#"code must match pattern "^[a-zé]+$""#
        );
    }

    #[test]
    fn array_sizes_uniqueness_and_item_paths() {
        let edit = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
        let schema = object(json!({
            "edits": {"type": "array", "minItems": 1, "maxItems": 2, "items": edit},
            "tags": {"type": "array", "uniqueItems": true},
        }));
        assert_eq!(
            one(schema.clone(), json!({"edits": []})),
            "edits must have at least 1 item"
        );
        let three = json!({"edits": [{"path": "a"}, {"path": "b"}, {"path": "c"}]});
        assert_eq!(one(schema.clone(), three), "edits must have at most 2 items");
        let bad = json!({"edits": [{"path": "a"}, {"path": 3}]});
        assert_eq!(one(schema.clone(), bad), "edits[1].path should be string");
        assert_eq!(
            one(schema.clone(), json!({"edits": [{}]})),
            "missing required edits[0].path"
        );
        assert_eq!(
            one(schema, json!({"tags": [1, "1", 1.0]})),
            "tags must not contain duplicate items"
        );
    }

    #[test]
    fn required_and_additional_properties() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "a": object(json!({"b": {"type": "integer"}}))},
            "required": ["path"],
            "additionalProperties": false,
        });
        let found = errors(schema.clone(), json!({"foo": 1, "a": {"b": "x", "c": 1}}));
        let expected = [
            "missing required path",
            "unexpected parameter foo",
            "a.b should be integer",
            "unexpected parameter a.c",
        ];
        assert_eq!(found, expected);
        let typed_extras = json!({"type": "object", "additionalProperties": {"type": "integer"},
            "patternProperties": {"^x_": {"type": "string"}}});
        assert!(errors(typed_extras.clone(), json!({"n": 1, "x_a": "s"})).is_empty());
        assert_eq!(one(typed_extras.clone(), json!({"n": "1"})), "n should be integer");
        assert_eq!(one(typed_extras, json!({"x_a": 1})), "x_a should be string");
        // A pattern we cannot evaluate (look-ahead) might cover any key, so none is reported as unexpected.
        let unknowable = json!({"additionalProperties": false, "patternProperties": {"(?=y)": {"type": "null"}}});
        assert!(errors(unknowable, json!({"yes": true, "no": 1})).is_empty());
        let sized = json!({"minProperties": 1, "maxProperties": 1});
        assert_eq!(
            one(sized.clone(), json!({})),
            "parameters must have at least 1 property"
        );
        assert_eq!(
            one(sized, json!({"a": 1, "b": 2})),
            "parameters must have at most 1 property"
        );
    }

    #[test]
    fn any_of_with_null_reports_types() {
        let schema = object(json!({"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}));
        assert!(errors(schema.clone(), json!({"n": null})).is_empty());
        assert!(errors(schema.clone(), json!({"n": 3})).is_empty());
        assert_eq!(one(schema, json!({"n": "3"})), "n should be integer or null");
    }

    #[test]
    fn any_of_reports_closest_branch() {
        let schema = object(json!({"target": {"oneOf": [
            {"type": "string", "minLength": 1},
            {"type": "object", "properties": {"file": {"type": "string"}, "line": {"type": "integer"}},
                "required": ["file", "line"]},
            {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
        ]}}));
        assert_eq!(
            one(schema.clone(), json!({"target": {"file": "a"}})),
            "missing required target.line"
        );
        assert_eq!(
            one(schema.clone(), json!({"target": ""})),
            "target must be at least 1 character"
        );
        assert!(errors(schema.clone(), json!({"target": {"url": "u"}})).is_empty());
        assert_eq!(one(schema, json!({"target": 1})), "target should be string or object");
        let shapeless = json!({"anyOf": [{"minimum": 5}, {"multipleOf": 2}]});
        assert_eq!(one(shapeless, json!(3)), "parameters must be >= 5");
    }

    #[test]
    fn all_of_and_not() {
        let schema = json!({"allOf": [{"required": ["a"]}, {"required": ["b"]}], "not": {"required": ["c"]}});
        assert_eq!(
            errors(schema.clone(), json!({})),
            ["missing required a", "missing required b"]
        );
        assert_eq!(
            one(schema, json!({"a": 1, "b": 1, "c": 1})),
            r#"parameters must not match {"required":["c"]}"#
        );
    }

    #[test]
    fn refs_resolve_against_the_root() {
        let schema = json!({
            "$defs": {"Mode": {"type": "string", "enum": ["x"]}},
            "definitions": {"Pos": {"type": "integer", "minimum": 1}},
            "type": "object",
            "properties": {
                "mode": {"$ref": "#/$defs/Mode"},
                "at": {"$ref": "#/definitions/Pos"},
                "self": {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
                "remote": {"$ref": "https://example.com/s.json"},
                "broken": {"$ref": "#/$defs/Nope"},
            },
            "additionalProperties": false,
        });
        let found = errors(
            schema.clone(),
            json!({"mode": "y", "at": 0, "self": {"at": "x"}, "remote": 1, "broken": 2}),
        );
        assert_eq!(
            found,
            [
                r#"mode must be one of ["x"]"#,
                "at must be >= 1",
                "self.at should be integer"
            ]
        );
        assert!(errors(schema, json!({"self": {"self": {"self": null}}})).is_empty());
    }

    #[test]
    fn recursive_refs_are_guarded() {
        let found = errors(json!({"$ref": "#"}), json!(1));
        assert_eq!(found, ["parameters is nested too deeply"]);
        let explosive = json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}]});
        assert!(!errors(explosive, json!(1)).is_empty());
    }

    #[test]
    fn unknown_keywords_and_boolean_schemas() {
        let schema = json!({"type": "object", "title": "T", "properties": {
            "p": {"type": "string", "format": "uri", "default": "x", "examples": ["y"], "x-vendor": {"a": 1},
                "pattern": "(unclosed"},
            "never": false,
            "any": true,
        }});
        assert!(errors(schema.clone(), json!({"p": "not a uri", "any": [1]})).is_empty());
        assert_eq!(one(schema, json!({"never": 1})), "never is not allowed");
        assert!(errors(json!(true), json!(1)).is_empty());
        assert!(errors(json!({"type": "frobnicate", "minimum": "x"}), json!(1)).is_empty());
    }

    #[test]
    fn echoed_values_keys_and_error_counts_stay_small() {
        let huge = "x".repeat(100_000);
        let schema = json!({"type": "object", "properties": {"m": {"enum": [huge.clone(), 1, 2]},
            "c": {"const": huge.clone()}}, "additionalProperties": false});
        for message in errors(schema.clone(), json!({"m": 3, "c": 3, huge.clone(): 1})) {
            assert!(message.chars().count() < 400, "{}", message.len());
        }
        let odd_key = json!({"additionalProperties": false});
        assert_eq!(one(odd_key, json!({"a\nb": 1})), r"unexpected parameter a\nb");
        let many: Vec<Value> = (0..1000).map(Value::from).collect();
        let message = one(json!({"enum": many}), json!(-1));
        assert!(message.len() < 400 && message.ends_with("more)]"), "{message}");
        let strings = json!({"type": "array", "items": {"type": "string"}});
        let found = errors(strings, json!(vec![1; 100]));
        assert_eq!(found.len(), 21);
        assert_eq!(found[20], "...and 80 more errors");
    }
}
