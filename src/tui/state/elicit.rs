//! An MCP server's request for input as a form: the fields of its requested schema (text, numbers, yes/no, one or
//! several of a list), what the user entered, and the answer built from it. Knows nothing of the terminal:
//! `view/elicit.rs` draws it and turns keys into these calls.

use serde_json::{Map, Number, Value};

/// A request for input waiting for the user, as the agent sent it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PendingElicitation {
    pub(crate) id: u64,
    pub(crate) server: String,
    pub(crate) message: String,
    pub(crate) schema: Value,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldKind {
    /// Free text; `format` as the schema says (email, uri, date, date-time).
    Text {
        format: Option<String>,
    },
    Number,
    Integer,
    Boolean,
    /// One of the options (value sent, label shown).
    Choice(Vec<(Value, String)>),
    /// Any of the options.
    Multi(Vec<(Value, String)>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) description: Option<String>,
    pub(crate) kind: FieldKind,
    pub(crate) required: bool,
    /// What was typed (text and number fields).
    pub(crate) input: String,
    /// Yes or no (boolean fields).
    pub(crate) checked: bool,
    /// The chosen option (choice fields; `None`: not given), or the option under the cursor (multi fields).
    pub(crate) choice: Option<usize>,
    /// The options picked (multi fields).
    pub(crate) picked: Vec<bool>,
}

impl Field {
    /// The field's type in a few words, for the form.
    pub(crate) fn type_label(&self) -> String {
        match &self.kind {
            FieldKind::Text { format: Some(f) } => format!("text, {f}"),
            FieldKind::Text { format: None } => "text".into(),
            FieldKind::Number => "number".into(),
            FieldKind::Integer => "integer".into(),
            FieldKind::Boolean => "yes/no".into(),
            FieldKind::Choice(_) => "one of".into(),
            FieldKind::Multi(_) => "any of".into(),
        }
    }

    /// The value as shown in the form.
    pub(crate) fn display(&self) -> String {
        match &self.kind {
            FieldKind::Text { .. } | FieldKind::Number | FieldKind::Integer => self.input.clone(),
            FieldKind::Boolean => if self.checked { "[x] yes" } else { "[ ] no" }.into(),
            FieldKind::Choice(options) => match self.choice {
                Some(i) => format!("‹ {} ›", options.get(i).map(|o| o.1.as_str()).unwrap_or_default()),
                None => "‹ (not given) ›".into(),
            },
            FieldKind::Multi(options) => options
                .iter()
                .enumerate()
                .map(|(i, (_, label))| {
                    let mark = if self.picked.get(i) == Some(&true) {
                        "[x]"
                    } else {
                        "[ ]"
                    };
                    let cursor = if self.choice == Some(i) { ">" } else { " " };
                    format!("{cursor}{mark} {label}")
                })
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    fn takes_text(&self) -> bool {
        matches!(
            self.kind,
            FieldKind::Text { .. } | FieldKind::Number | FieldKind::Integer
        )
    }
}

/// The form of one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ElicitForm {
    pub(crate) id: u64,
    pub(crate) server: String,
    pub(crate) message: String,
    pub(crate) fields: Vec<Field>,
    pub(crate) focus: usize,
    /// Why the last submit was refused.
    pub(crate) error: Option<String>,
}

impl ElicitForm {
    pub(crate) fn new(request: &PendingElicitation) -> Self {
        let required: Vec<&str> = request.schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let fields = request.schema["properties"]
            .as_object()
            .map(|props| {
                props
                    .iter()
                    .map(|(name, schema)| field(name, schema, required.contains(&name.as_str())))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            id: request.id,
            server: printable(&request.server),
            message: printable(&request.message),
            fields,
            focus: 0,
            error: None,
        }
    }

    pub(crate) fn next(&mut self) {
        if !self.fields.is_empty() {
            self.focus = (self.focus + 1) % self.fields.len();
        }
    }

    pub(crate) fn previous(&mut self) {
        if !self.fields.is_empty() {
            self.focus = (self.focus + self.fields.len() - 1) % self.fields.len();
        }
    }

    /// A typed character: text for text fields; a space toggles yes/no and picks in a list.
    pub(crate) fn type_char(&mut self, c: char) {
        let Some(field) = self.fields.get_mut(self.focus) else {
            return;
        };
        if field.takes_text() {
            field.input.push(c);
        } else if c == ' ' {
            match &field.kind {
                FieldKind::Boolean => field.checked = !field.checked,
                FieldKind::Multi(_) => {
                    if let Some(picked) = field.choice.and_then(|i| field.picked.get_mut(i)) {
                        *picked = !*picked;
                    }
                }
                _ => self.step(1),
            }
        }
    }

    pub(crate) fn backspace(&mut self) {
        if let Some(field) = self.fields.get_mut(self.focus) {
            field.input.pop();
        }
    }

    /// Left and right: the previous or next option (or flips yes/no).
    pub(crate) fn step(&mut self, by: isize) {
        let Some(field) = self.fields.get_mut(self.focus) else {
            return;
        };
        match &field.kind {
            FieldKind::Boolean => field.checked = !field.checked,
            FieldKind::Choice(options) => {
                // "(not given)" is a stop of its own for optional fields.
                let stops = options.len() + usize::from(!field.required);
                if stops == 0 {
                    return;
                }
                let at = match field.choice {
                    Some(i) => i + usize::from(!field.required),
                    None => 0,
                };
                let next = (at as isize + by).rem_euclid(stops as isize) as usize;
                field.choice = if field.required {
                    Some(next)
                } else {
                    next.checked_sub(1)
                };
            }
            FieldKind::Multi(options) if !options.is_empty() => {
                let at = field.choice.unwrap_or(0) as isize;
                field.choice = Some((at + by).rem_euclid(options.len() as isize) as usize);
            }
            _ => {}
        }
    }

    /// The values to send, or why they cannot be sent (the focus moves to that field).
    pub(crate) fn answer(&mut self) -> Result<Map<String, Value>, String> {
        let mut content = Map::new();
        for (i, field) in self.fields.iter().enumerate() {
            match value(field) {
                Ok(Some(v)) => {
                    content.insert(field.name.clone(), v);
                }
                Ok(None) if field.required => {
                    self.focus = i;
                    return Err(format!("{} is required", field.title));
                }
                Ok(None) => {}
                Err(why) => {
                    self.focus = i;
                    return Err(why);
                }
            }
        }
        Ok(content)
    }
}

fn value(field: &Field) -> Result<Option<Value>, String> {
    let text = field.input.trim();
    Ok(match &field.kind {
        FieldKind::Text { .. } if text.is_empty() => None,
        FieldKind::Text { .. } => Some(Value::String(text.to_string())),
        FieldKind::Number | FieldKind::Integer if text.is_empty() => None,
        FieldKind::Integer => Some(Value::from(
            text.parse::<i64>()
                .map_err(|_| format!("{} must be a whole number", field.title))?,
        )),
        FieldKind::Number => {
            let n = text
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .ok_or_else(|| format!("{} must be a number", field.title))?;
            Some(Value::Number(n))
        }
        FieldKind::Boolean => Some(Value::Bool(field.checked)),
        FieldKind::Choice(options) => field.choice.and_then(|i| options.get(i)).map(|o| o.0.clone()),
        FieldKind::Multi(options) => {
            let picked: Vec<Value> = options
                .iter()
                .zip(&field.picked)
                .filter(|(_, p)| **p)
                .map(|(o, _)| o.0.clone())
                .collect();
            (!picked.is_empty()).then_some(Value::Array(picked))
        }
    })
}

/// One property of the requested schema as a field, its default filled in.
fn field(name: &str, schema: &Value, required: bool) -> Field {
    let title = printable(schema["title"].as_str().unwrap_or(name));
    let description = schema["description"].as_str().map(printable);
    let default = &schema["default"];
    let kind = match schema["type"].as_str() {
        Some("array") => FieldKind::Multi(options(&schema["items"])),
        Some("boolean") => FieldKind::Boolean,
        Some("number") => FieldKind::Number,
        Some("integer") => FieldKind::Integer,
        _ if !options(schema).is_empty() => FieldKind::Choice(options(schema)),
        _ => FieldKind::Text {
            format: schema["format"].as_str().map(str::to_string),
        },
    };
    let mut field = Field {
        name: name.to_string(),
        title,
        description,
        kind,
        required,
        input: String::new(),
        checked: default.as_bool().unwrap_or(false),
        choice: None,
        picked: Vec::new(),
    };
    match &field.kind {
        FieldKind::Text { .. } => field.input = default.as_str().unwrap_or_default().to_string(),
        FieldKind::Number | FieldKind::Integer if default.is_number() => field.input = default.to_string(),
        FieldKind::Choice(options) => {
            field.choice = options
                .iter()
                .position(|o| &o.0 == default)
                .or(if required { Some(0) } else { None });
        }
        FieldKind::Multi(options) => {
            let defaults = default.as_array().cloned().unwrap_or_default();
            field.picked = options.iter().map(|o| defaults.contains(&o.0)).collect();
            field.choice = Some(0);
        }
        _ => {}
    }
    field
}

/// The options of an enum schema: `enum` (labelled by `enumNames` when given) or `oneOf`/`anyOf` of `const`s with
/// titles.
fn options(schema: &Value) -> Vec<(Value, String)> {
    if let Some(values) = schema["enum"].as_array() {
        let names = schema["enumNames"].as_array();
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let label = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .map(printable)
                    .unwrap_or_else(|| label_of(v));
                (v.clone(), label)
            })
            .collect();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(list) = schema[key].as_array() {
            return list
                .iter()
                .filter(|o| !o["const"].is_null())
                .map(|o| {
                    let label = o["title"]
                        .as_str()
                        .map(printable)
                        .unwrap_or_else(|| label_of(&o["const"]));
                    (o["const"].clone(), label)
                })
                .collect();
        }
    }
    Vec::new()
}

fn label_of(value: &Value) -> String {
    match value {
        Value::String(s) => printable(s),
        other => other.to_string(),
    }
}

/// What a server wrote, without control characters (a server must not move the cursor or recolour the screen); line
/// breaks stay.
pub(crate) fn printable(text: &str) -> String {
    text.chars().filter(|c| *c == '\n' || !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form(schema: Value) -> ElicitForm {
        ElicitForm::new(&PendingElicitation {
            id: 1,
            server: "s".into(),
            message: "m".into(),
            schema,
        })
    }

    #[test]
    fn control_characters_from_the_server_are_not_shown() {
        let f = form(json!({"properties": {"a": {"type": "string", "title": "A\u{1b}[2J", "description": "x\ry"}}}));
        assert_eq!(
            (f.fields[0].title.as_str(), f.fields[0].description.as_deref()),
            ("A[2J", Some("xy"))
        );
        assert_eq!(printable("line\u{7}\nnext"), "line\nnext");
    }

    #[test]
    fn fields_take_their_kinds_and_defaults() {
        let mut f = form(json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "title": "Name"},
            "agree": {"type": "boolean"},
            "age": {"type": "integer", "default": 42},
            "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"], "default": "p2"},
            "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Flash"}]},
            "fish": {"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]}, "default": ["f2"]}
        }}));
        let kinds: Vec<String> = f.fields.iter().map(Field::type_label).collect();
        // In the server's order.
        assert_eq!(kinds, ["text", "yes/no", "integer", "one of", "one of", "any of"]);
        assert_eq!(f.answer().unwrap_err(), "Name is required");
        assert_eq!(f.fields[f.focus].name, "name");
        for c in "Ada".chars() {
            f.type_char(c);
        }
        let answer = f.answer().unwrap();
        assert_eq!(
            Value::Object(answer),
            json!({"name": "Ada", "agree": false, "age": 42, "pet": "p2", "fish": ["f2"]})
        );
        // The optional choice without a default is "(not given)" until one steps onto an option.
        f.focus = 4;
        assert_eq!(f.fields[4].display(), "‹ (not given) ›");
        f.step(1);
        assert_eq!(f.fields[4].display(), "‹ Superman ›");
        f.previous();
        f.step(-1);
        assert_eq!(f.fields[3].display(), "‹ Cats ›");
        f.focus = 1;
        f.type_char(' ');
        f.focus = 5;
        f.step(-1);
        assert_eq!(f.fields[5].display(), " [ ] Tuna >[x] Trout");
        f.type_char(' ');
        f.focus = 2;
        f.backspace();
        f.backspace();
        f.type_char('x');
        assert_eq!(f.answer().unwrap_err(), "age must be a whole number");
        f.backspace();
        f.type_char('7');
        let answer = f.answer().unwrap();
        assert_eq!(
            (
                &answer["age"],
                &answer["agree"],
                &answer["hero"],
                &answer["pet"],
                answer.get("fish")
            ),
            (&json!(7), &json!(true), &json!("h1"), &json!("p1"), None)
        );
    }
}
