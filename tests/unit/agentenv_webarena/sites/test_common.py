"""The sites' shared form reading: a field's first value, and every value of a multi-select."""
from agentenv_webarena.sites.common import form_fields


def test_posted_form_keeps_first_values_and_every_value_of_a_repeated_field():
    form = form_fields(b"name=spring+sale&groups=0&groups=1&groups=3&empty=&name=second")
    assert form["name"] == "spring sale" and form.get("empty") == "" and "missing" not in form
    assert form.getlist("groups") == ["0", "1", "3"]
    assert form.getlist("name") == ["spring sale", "second"] and form.getlist("missing") == []
