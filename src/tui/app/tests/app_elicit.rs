//! The form for an MCP server's request for input: it opens on `Event::Elicitation`, Enter sends the values as
//! `Op::Elicit`, Esc declines, and an interrupted turn closes it.

use super::*;
use crate::view::elicit::ElicitLayer;
use tern_protocol::ElicitationAnswer;

impl Harness {
    fn elicit(&mut self, id: u64) {
        self.event(Event::Elicitation {
            id,
            server: "everything".into(),
            message: "Please provide inputs:".into(),
            schema: json!({"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your full name"},
                "agree": {"type": "boolean", "title": "Agree"},
                "pet": {"type": "string", "title": "Pet", "enum": ["cat", "dog"], "default": "dog"}
            }}),
        });
        let top = self.app.layers.pop().unwrap();
        assert_eq!(
            (top.name(), top.answers()),
            ("elicitation", crate::layer::Answers::Elicitation(id))
        );
        let request = self.app.state.elicitations.front().cloned().unwrap();
        self.app.layers.push(Box::new(ElicitLayer::new(&request).settled()));
    }
}

#[test]
fn the_form_sends_values_or_declines() {
    let mut h = harness();
    h.elicit(4);
    insta::assert_snapshot!(h.screen(80, 16));
    h.press(key(KeyCode::Enter));
    assert!(h.sent().is_empty(), "the required name is missing");
    h.keys("Ada");
    h.press(key(KeyCode::Tab));
    h.keys(" ");
    h.press(key(KeyCode::Tab));
    h.press(key(KeyCode::Left));
    h.press(key(KeyCode::Enter));
    let mut content = serde_json::Map::new();
    content.insert("name".into(), json!("Ada"));
    content.insert("agree".into(), json!(true));
    content.insert("pet".into(), json!("cat"));
    assert_eq!(
        h.sent(),
        vec![Op::Elicit {
            id: 4,
            answer: ElicitationAnswer::Accept { content }
        }]
    );
    assert!(h.app.layers.is_empty() && h.app.state.elicitations.is_empty());

    h.elicit(5);
    h.press(key(KeyCode::Esc));
    assert_eq!(
        h.sent(),
        vec![Op::Elicit {
            id: 5,
            answer: ElicitationAnswer::Decline { reason: None }
        }]
    );
    assert!(h.app.layers.is_empty());
}

#[test]
fn an_interrupted_turn_closes_the_form() {
    let mut h = harness();
    h.elicit(6);
    h.event(Event::TurnFinished {
        reason: TurnEnd::Interrupted,
    });
    assert!(h.app.layers.is_empty() && h.app.state.elicitations.is_empty());
    assert!(h.sent().is_empty());
}
