//! Fuzz target for `cast` and `validate`: arbitrary JSON values against arbitrary generated schemas (every supported
//! keyword, with well-formed and malformed values, recursive `$ref`s, bad patterns). Neither may panic; messages
//! stay short; a cast value that validates is a fixed point of `cast`; every error names a path that exists in the
//! value (or, for a missing property, whose parent does).

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};

use super::{MAX_ERRORS, TOO_COMPLEX, cast, validate};
use tern_testkit::fuzz_config as config;

/// Object keys: few, so generated values and schemas talk about the same properties; plain, so paths parse.
fn key() -> impl Strategy<Value = String> {
    select(vec!["a", "b", "path", "n", "items", "x_1"]).prop_map(String::from)
}

fn text() -> impl Strategy<Value = String> {
    let tricky = vec![
        "60",
        " 7 ",
        "2.5",
        "-0",
        "1e400",
        "NaN",
        "true",
        "false",
        "null",
        "",
        "[1, \"2\"]",
        "{\"a\": 3}",
        "[",
        "{",
        "18446744073709551616",
        "é‘’“”—",
        "a\u{0}b",
        "\n",
    ];
    prop_oneof![select(tricky).prop_map(String::from), "\\PC{0,8}"]
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-10i64..10).prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        select(vec![0.5, -1.5, 0.1, 1e300]).prop_map(Value::from),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        number(),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn type_name() -> impl Strategy<Value = Value> {
    let names = vec![
        "null", "boolean", "integer", "number", "string", "array", "object", "float", "",
    ];
    prop_oneof![
        4 => select(names.clone()).prop_map(Value::from),
        2 => prop::collection::vec(select(names).prop_map(Value::from), 0..3).prop_map(Value::Array),
        1 => Just(json!(5)),
    ]
}

fn count() -> impl Strategy<Value = Value> {
    prop_oneof![6 => (0u64..5).prop_map(Value::from), 1 => Just(json!(-1)), 1 => Just(json!("2")), 1 => Just(json!(1.5))]
}

fn pattern() -> impl Strategy<Value = Value> {
    select(vec!["^[0-9]+$", "a", "(", "^$", "\\p{L}", "[", "(a+)+$", "é"]).prop_map(Value::from)
}

fn reference() -> impl Strategy<Value = Value> {
    select(vec![
        "#",
        "#/$defs/a",
        "#/definitions/b",
        "#/properties/a",
        "#/$defs/missing",
        "#/items/0",
        "https://example.com/s.json",
        "#/%ZZ",
        "",
    ])
    .prop_map(Value::from)
}

fn schema_map(entries: Vec<(String, Value)>) -> Value {
    Value::Object(entries.into_iter().collect())
}

/// One keyword and its value; subschemas come from `inner`.
fn keyword(inner: BoxedStrategy<Value>) -> impl Strategy<Value = (String, Value)> {
    let kv = |name: &'static str, value: BoxedStrategy<Value>| value.prop_map(move |v| (name.to_string(), v)).boxed();
    let props = prop::collection::vec((key(), inner.clone()), 0..4)
        .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>()))
        .boxed();
    let list = prop::collection::vec(inner.clone(), 0..3)
        .prop_map(Value::Array)
        .boxed();
    prop_oneof![
        kv("type", type_name().boxed()),
        kv("type", type_name().boxed()),
        kv("nullable", any::<bool>().prop_map(Value::from).boxed()),
        kv(
            "enum",
            prop::collection::vec(arb_json(), 0..4).prop_map(Value::Array).boxed()
        ),
        kv("const", arb_json().boxed()),
        kv("minimum", number().boxed()),
        kv("maximum", number().boxed()),
        kv(
            "exclusiveMinimum",
            prop_oneof![number(), any::<bool>().prop_map(Value::from)].boxed()
        ),
        kv(
            "exclusiveMaximum",
            prop_oneof![number(), any::<bool>().prop_map(Value::from)].boxed()
        ),
        kv(
            "multipleOf",
            prop_oneof![number(), Just(json!(0)), Just(json!(3))].boxed()
        ),
        kv("minLength", count().boxed()),
        kv("maxLength", count().boxed()),
        kv("minItems", count().boxed()),
        kv("maxItems", count().boxed()),
        kv("minProperties", count().boxed()),
        kv("maxProperties", count().boxed()),
        kv("uniqueItems", any::<bool>().prop_map(Value::from).boxed()),
        kv("pattern", pattern().boxed()),
        kv("items", prop_oneof![inner.clone(), list.clone()].boxed()),
        kv("prefixItems", list.clone()),
        kv("additionalItems", inner.clone()),
        kv("properties", props.clone()),
        kv("properties", props.clone()),
        kv(
            "required",
            prop::collection::vec(key().prop_map(Value::from), 0..3)
                .prop_map(Value::Array)
                .boxed()
        ),
        kv("additionalProperties", inner.clone()),
        kv(
            "patternProperties",
            prop::collection::vec((pattern(), inner.clone()), 0..2)
                .prop_map(|kv| {
                    Value::Object(
                        kv.into_iter()
                            .map(|(p, s)| (p.as_str().unwrap_or("").to_string(), s))
                            .collect(),
                    )
                })
                .boxed()
        ),
        kv("allOf", list.clone()),
        kv("anyOf", list.clone()),
        kv("oneOf", list),
        kv("not", inner.clone()),
        kv("$ref", reference().boxed()),
        kv("$defs", inner.clone().prop_map(|s| json!({"a": s})).boxed()),
        kv("definitions", inner.prop_map(|s| json!({"b": s})).boxed()),
        kv("format", Just(json!("date-time")).boxed()),
        kv("items", Just(json!("x")).boxed()),
        kv("properties", Just(json!([])).boxed()),
        kv("required", Just(json!("path")).boxed()),
    ]
}

fn arb_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        Just(json!(null)),
        type_name().prop_map(|t| json!({"type": t})),
    ];
    leaf.prop_recursive(4, 48, 4, |inner| {
        prop::collection::vec(keyword(inner.boxed()), 0..5).prop_map(schema_map)
    })
}

/// The path named by a message, and whether it must exist itself or only its parent (a missing property). `None`
/// for messages about the whole call or with a shortened path.
fn named_path(message: &str) -> Option<(String, bool)> {
    if message == TOO_COMPLEX || message.starts_with("...and ") || message.starts_with('…') {
        return None;
    }
    if let Some(rest) = message.strip_prefix("missing required ") {
        return Some((rest.to_string(), false));
    }
    if let Some(rest) = message.strip_prefix("unexpected parameter ") {
        return Some((rest.to_string(), true));
    }
    let label = message.split(' ').next().unwrap_or_default();
    Some((label.to_string(), true))
}

/// Follows `a.b[2].c` (or `parameters`, the root) into `value`.
fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    if path == "parameters" {
        return Some(value);
    }
    let mut at = value;
    for segment in path.split('.') {
        let (name, indices) = segment.split_once('[').map_or((segment, ""), |(n, rest)| (n, rest));
        if !name.is_empty() {
            at = at.get(name)?;
        }
        for index in indices.split('[').filter(|s| !s.is_empty()) {
            at = at.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(at)
}

fn parent(path: &str) -> String {
    match path.rfind(['.', '[']) {
        Some(i) => path[..i].to_string(),
        None => "parameters".to_string(),
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn cast_and_validate_never_panic_and_stay_short(schema in arb_schema(), value in arb_json()) {
        let cast_value = cast(&schema, value.clone());
        for found in [validate(&schema, &cast_value), validate(&schema, &value)] {
            prop_assert!(found.len() <= MAX_ERRORS + 1);
            for message in found {
                prop_assert!(message.chars().count() <= 400, "{}", message);
            }
        }
    }

    #[test]
    fn a_cast_value_that_validates_is_a_fixed_point(schema in arb_schema(), value in arb_json()) {
        let once = cast(&schema, value);
        if validate(&schema, &once).is_empty() {
            prop_assert_eq!(cast(&schema, once.clone()), once);
        }
    }

    #[test]
    fn errors_name_paths_in_the_value(schema in arb_schema(), value in arb_json()) {
        for message in validate(&schema, &value) {
            let Some((path, itself)) = named_path(&message) else { continue };
            let target = if itself { path.clone() } else { parent(&path) };
            prop_assert!(
                lookup(&value, &target).is_some(),
                "{:?} names {:?}, not in {}", message, target, value
            );
        }
    }
}

/// Found by fuzzing: with no `type`, `properties` alone makes cast read a valid string holding JSON as the object it
/// spells (cast also snaps a valid 2.0 to an enum's 2 on purpose, so "valid means untouched" is not the contract).
/// Pinned so a change to either is deliberate.
#[test]
fn a_typeless_properties_schema_parses_a_json_string() {
    let schema = json!({"properties": {"a": {}}});
    let value = json!("{\"a\": 3}");
    assert!(validate(&schema, &value).is_empty());
    assert_eq!(cast(&schema, value), json!({"a": 3}));
}
